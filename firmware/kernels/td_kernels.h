/*
 * td_kernels.h - parameter structs and prototypes of every tinydeploy kernel.
 *
 * Every kernel is called as symbol(&params, <arena pointers>): shapes, quantization offsets,
 * activation ranges and per-channel requantization arrays are decided on the host (in the
 * op's Python `prepare`) and arrive here as literals or as const arrays in flash. Kernels never
 * switch on data types at run time. Tensors are NHWC (batch, height, width, channels), int8,
 * row-major, densely packed.
 *
 * Conventions used in the field docs below:
 *   [in]  read by the kernel      [out] written by the kernel
 *   offsets are the negated zero points TFLite uses (input_offset = -input_zero_point)
 *   act_min/act_max are the int8 output clamp range (fused activation already folded in)
 *   mult/shift: Q31 multiplier in [2^30, 2^31) (or 0) and shift in [-31, 30], see td_requant.h
 */
#ifndef TD_KERNELS_H
#define TD_KERNELS_H

#include <stdint.h>

#include "td_requant.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- CONV_2D (td_conv2d_s8_ref) ------------------------------------------------------ */
typedef struct {
    int32_t batches;        /* [in] N >= 1 */
    int32_t in_h, in_w;     /* [in] input height/width >= 1 */
    int32_t in_c;           /* [in] input channels = groups * filter_c */
    int32_t out_h, out_w;   /* [in] output height/width >= 1 (computed on the host) */
    int32_t out_c;          /* [in] output channels, a multiple of groups */
    int32_t filter_h, filter_w; /* [in] kernel size >= 1 */
    int32_t filter_c;       /* [in] input channels per group (filter's last dim) */
    int32_t stride_h, stride_w;     /* [in] >= 1 */
    int32_t dilation_h, dilation_w; /* [in] >= 1 */
    int32_t pad_h, pad_w;   /* [in] top/left padding >= 0 (TFLite's padding offsets) */
    int32_t input_offset;   /* [in] -input_zero_point, in [-127, 128] */
    int32_t output_offset;  /* [in] output_zero_point, in [-128, 127] */
    int32_t act_min, act_max; /* [in] -128 <= act_min <= act_max <= 127 */
    const int8_t *filter;   /* [in] [out_c][filter_h][filter_w][filter_c] */
    const int32_t *bias;    /* [in] [out_c], or NULL for no bias */
    const int32_t *mult;    /* [in] [out_c] per-channel multipliers */
    const int32_t *shift;   /* [in] [out_c] per-channel shifts */
} td_conv2d_params_t;

/* ---- DEPTHWISE_CONV_2D (td_dwconv2d_s8_ref) ------------------------------------------ */
typedef struct {
    int32_t batches;
    int32_t in_h, in_w, in_c;
    int32_t out_h, out_w;
    int32_t out_c;          /* [in] in_c * depth_multiplier */
    int32_t depth_multiplier; /* [in] >= 1 */
    int32_t filter_h, filter_w;
    int32_t stride_h, stride_w;
    int32_t dilation_h, dilation_w;
    int32_t pad_h, pad_w;
    int32_t input_offset;
    int32_t output_offset;
    int32_t act_min, act_max;
    const int8_t *filter;   /* [in] [filter_h][filter_w][out_c] (TFLite's [1, H, W, C*M]) */
    const int32_t *bias;    /* [in] [out_c], or NULL */
    const int32_t *mult;    /* [in] [out_c] */
    const int32_t *shift;   /* [in] [out_c] */
} td_dwconv2d_params_t;

/* ---- FULLY_CONNECTED (td_fully_connected_s8_ref) ------------------------------------- */
typedef struct {
    int32_t batches;        /* [in] rows of the input seen as [batches][accum_depth] */
    int32_t accum_depth;    /* [in] input features per row */
    int32_t out_c;          /* [in] output features per row */
    int32_t input_offset;   /* [in] -input_zero_point */
    int32_t filter_offset;  /* [in] -filter_zero_point (0 for symmetric int8 weights) */
    int32_t output_offset;  /* [in] output_zero_point */
    int32_t act_min, act_max;
    const int8_t *filter;   /* [in] [out_c][accum_depth] */
    const int32_t *bias;    /* [in] [out_c], or NULL */
    const int32_t *mult;    /* [in] [out_c] (per-tensor models repeat one value) */
    const int32_t *shift;   /* [in] [out_c] */
} td_fully_connected_params_t;

/* ---- AVERAGE_POOL_2D / MAX_POOL_2D (td_avgpool2d_s8_ref, td_maxpool2d_s8_ref) -------- */
typedef struct {
    int32_t batches;
    int32_t in_h, in_w;
    int32_t channels;       /* [in] input channels = output channels */
    int32_t out_h, out_w;
    int32_t filter_h, filter_w;
    int32_t stride_h, stride_w;
    int32_t pad_h, pad_w;
    int32_t act_min, act_max; /* [in] clamp of the int8 result (input/output quant equal) */
} td_pool2d_params_t;

/* ---- SOFTMAX (td_softmax_s8_ref) ------------------------------------------------------ */
typedef struct {
    int32_t rows;           /* [in] product of all but the last dimension */
    int32_t depth;          /* [in] last dimension, the softmax axis */
    int32_t diff_min;       /* [in] input differences below this (<= 0) contribute 0 */
    const int32_t *exp_lut; /* [in] [256]: exp_lut[d] = gemmlowp exp (Q0.31) of the scaled
                             *      difference -d, already rescaled to Q12.19 (0 below
                             *      diff_min); computed on the host */
} td_softmax_params_t;

void td_conv2d_s8_ref(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0);
void td_dwconv2d_s8_ref(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0);
void td_fully_connected_s8_ref(const td_fully_connected_params_t *p, const int8_t *in0,
                               int8_t *out0);
void td_avgpool2d_s8_ref(const td_pool2d_params_t *p, const int8_t *in0, int8_t *out0);
void td_maxpool2d_s8_ref(const td_pool2d_params_t *p, const int8_t *in0, int8_t *out0);
void td_softmax_s8_ref(const td_softmax_params_t *p, const int8_t *in0, int8_t *out0);

/* ---- parameter structs of elementwise, shape and activation ops (below) ---- */

/* (structs and prototypes of the other ops go between the marker above and these lines) */
#ifdef __cplusplus
}
#endif

#endif /* TD_KERNELS_H */
