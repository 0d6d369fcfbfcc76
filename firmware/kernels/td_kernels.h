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
 *   mult/shift: Q31 multiplier in [2^30, 2^31) (or 0) and shift in [-31, 30], see td_requant.h;
 *   per-channel shift arrays are int8 (the range fits; a quarter of the flash of int32)
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
    const int8_t *shift;    /* [in] [out_c] per-channel shifts */
    int32_t requant_form;   /* [in] dsp kernels: 1 = the rounding form of td_requant.h, proven
                             *      exact for this layer on the host; 0 = td_requantize */
} td_conv2d_params_t;

/* ---- DEPTHWISE_CONV_2D (td_dwconv2d_s8_ref) ------------------------------------------ */
typedef struct {
    int32_t batches;        /* [in] N >= 1 */
    int32_t in_h, in_w, in_c; /* [in] input height/width/channels >= 1 */
    int32_t out_h, out_w;   /* [in] output height/width >= 1 (computed on the host) */
    int32_t out_c;          /* [in] in_c * depth_multiplier */
    int32_t depth_multiplier; /* [in] >= 1; output channel o reads input channel o / M */
    int32_t filter_h, filter_w; /* [in] kernel size >= 1 */
    int32_t stride_h, stride_w;     /* [in] >= 1 */
    int32_t dilation_h, dilation_w; /* [in] >= 1 */
    int32_t pad_h, pad_w;   /* [in] top/left padding >= 0 */
    int32_t input_offset;   /* [in] -input_zero_point, in [-127, 128] */
    int32_t output_offset;  /* [in] output_zero_point, in [-128, 127] */
    int32_t act_min, act_max; /* [in] -128 <= act_min <= act_max <= 127 */
    const int8_t *filter;   /* [in] [filter_h][filter_w][out_c] (TFLite's [1, H, W, C*M]) */
    const int32_t *bias;    /* [in] [out_c], or NULL for no bias */
    const int32_t *mult;    /* [in] [out_c] per-channel multipliers */
    const int8_t *shift;    /* [in] [out_c] per-channel shifts */
    int32_t requant_form;   /* [in] dsp kernels: as in td_conv2d_params_t */
} td_dwconv2d_params_t;

/* ---- FULLY_CONNECTED (td_fully_connected_s8_ref) ------------------------------------- */
typedef struct {
    int32_t batches;        /* [in] rows of the input seen as [batches][accum_depth] */
    int32_t accum_depth;    /* [in] input features per row */
    int32_t out_c;          /* [in] output features per row */
    int32_t input_offset;   /* [in] -input_zero_point */
    int32_t filter_offset;  /* [in] -filter_zero_point (0 for symmetric int8 weights) */
    int32_t output_offset;  /* [in] output_zero_point, in [-128, 127] */
    int32_t act_min, act_max; /* [in] -128 <= act_min <= act_max <= 127 */
    const int8_t *filter;   /* [in] [out_c][accum_depth] */
    const int32_t *bias;    /* [in] [out_c], or NULL */
    const int32_t *mult;    /* [in] [out_c] (per-tensor models repeat one value) */
    const int8_t *shift;    /* [in] [out_c] */
    int32_t requant_form;   /* [in] dsp kernels: as in td_conv2d_params_t */
} td_fully_connected_params_t;

/* ---- AVERAGE_POOL_2D / MAX_POOL_2D (td_avgpool2d_s8_ref, td_maxpool2d_s8_ref) -------- */
typedef struct {
    int32_t batches;        /* [in] N >= 1 */
    int32_t in_h, in_w;     /* [in] input height/width >= 1 */
    int32_t channels;       /* [in] input channels = output channels >= 1 */
    int32_t out_h, out_w;   /* [in] output height/width >= 1 (computed on the host) */
    int32_t filter_h, filter_w; /* [in] window size >= 1 (may exceed the input) */
    int32_t stride_h, stride_w; /* [in] >= 1 */
    int32_t pad_h, pad_w;   /* [in] top/left padding >= 0; padded taps are not counted */
    int32_t act_min, act_max; /* [in] clamp of the int8 result (input/output quant equal) */
} td_pool2d_params_t;

/* ---- SOFTMAX (td_softmax_s8_ref) ------------------------------------------------------ */
typedef struct {
    int32_t rows;           /* [in] product of all but the last dimension */
    int32_t depth;          /* [in] last dimension, the softmax axis */
    const int32_t *exp_lut; /* [in] [256]: exp_lut[d] = gemmlowp exp (Q0.31) of the input
                             *      difference -d scaled by beta * input_scale, 0 where -d is
                             *      below TFLite's diff_min; computed on the host */
} td_softmax_params_t;

/* ---- streamed AVERAGE_POOL_2D over all of time (td_stream_avgpool_s8_ref) -------------
 * The step function's time reduction (tinydeploy/stream): the pool's input is held as
 * top rows (recomputed each step), a circular ring of exact per-row sums (int16) and their total of the interior rows kept
 * across steps, and the tail rows of this step (the newest interior rows, whose sums enter
 * the ring's last slots, then the bottom edge rows). The result equals the full window's
 * average pool over rows * cols taps byte for byte. */
typedef struct {
    int32_t channels;       /* [in] >= 1 */
    int32_t cols;           /* [in] values per row and channel (the map's width) >= 1 */
    int32_t top_rows;       /* [in] rows read from `top` (0: none) */
    int32_t ring_rows;      /* [in] rows summed in `ring` (0: none) */
    int32_t new_rows;       /* [in] first rows of `tail` whose sums replace the oldest slots */
    int32_t bottom_rows;    /* [in] rows of `tail` after the new ones, summed directly */
    int32_t count;          /* [in] taps of the full window's pool (rows * cols) >= 1 */
    int32_t act_min, act_max; /* [in] clamp of the int8 result */
} td_stream_avgpool_params_t;

/* top: [top_rows][cols][channels]; tail: [new_rows + bottom_rows][cols][channels];
 * state (read and written, 4-byte aligned, all zero at reset): int32 total[channels] (the
 *       ring's sum), int32 oldest slot, int16 ring[ring_rows][channels] (a circular
 *       buffer of row sums, exact: cols <= 255);
 * out0: [channels]. */
void td_stream_avgpool_s8_ref(const td_stream_avgpool_params_t *p, const int8_t *top,
                              const int8_t *tail, void *state, int8_t *out0);

void td_conv2d_s8_ref(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0);
/* 1x1 without groups, output pixels from the last to the first (may trail its input) */
void td_conv2d_1x1_back_s8_ref(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0);
void td_dwconv2d_s8_ref(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0);
void td_fully_connected_s8_ref(const td_fully_connected_params_t *p, const int8_t *in0,
                               int8_t *out0);
void td_avgpool2d_s8_ref(const td_pool2d_params_t *p, const int8_t *in0, int8_t *out0);
void td_maxpool2d_s8_ref(const td_pool2d_params_t *p, const int8_t *in0, int8_t *out0);
void td_softmax_s8_ref(const td_softmax_params_t *p, const int8_t *in0, int8_t *out0);

/* ---- parameter structs of elementwise, shape and activation ops (below) ---- */

/* ---- ADD (td_add_s8_ref) and MUL (td_mul_s8_ref), with broadcasting ------------------- *
 * Shapes are right-aligned to TD_BCAST_DIMS dimensions on the host and adjacent dimensions
 * with the same broadcast pattern are merged, so the last dimension is usually long. For an
 * output index (i0..i5) the kernel reads in0[sum(ik * in0_strides[k])] and likewise in1: a
 * stride of 0 repeats (broadcasts) that input along dimension k. The output is written
 * densely in row-major order. */
#define TD_BCAST_DIMS 6
typedef struct {
    int32_t left_shift;     /* [in] 20: both inputs are scaled by 2^left_shift first */
    int32_t in0_offset;     /* [in] -input0_zero_point, in [-127, 128] */
    int32_t in0_mult;       /* [in] Q31 multiplier of input 0 (scale0 / (2 * max scale)) */
    int32_t in0_shift;      /* [in] <= 0 */
    int32_t in1_offset;     /* [in] -input1_zero_point */
    int32_t in1_mult;
    int32_t in1_shift;      /* [in] <= 0 */
    int32_t out_offset;     /* [in] output_zero_point */
    int32_t out_mult;       /* [in] Q31 multiplier of the sum (2 * max scale / (2^20 out)) */
    int32_t out_shift;      /* [in] <= 0 */
    int32_t act_min, act_max; /* [in] -128 <= act_min <= act_max <= 127 */
    const int32_t *out_dims;    /* [in] [TD_BCAST_DIMS] output dims, each >= 1 */
    const int32_t *in0_strides; /* [in] [TD_BCAST_DIMS] element strides of in0, 0 = bcast */
    const int32_t *in1_strides; /* [in] [TD_BCAST_DIMS] element strides of in1, 0 = bcast */
    const int8_t *in1_const;    /* [in] a constant second operand (flash), or NULL to read
                                 *      the in1 argument */
} td_add_params_t;

typedef struct {
    int32_t in0_offset;     /* [in] -input0_zero_point */
    int32_t in1_offset;     /* [in] -input1_zero_point */
    int32_t out_offset;     /* [in] output_zero_point */
    int32_t out_mult;       /* [in] Q31 multiplier of scale0 * scale1 / out_scale */
    int32_t out_shift;      /* [in] [-31, 30] */
    int32_t act_min, act_max;
    const int32_t *out_dims;    /* as in td_add_params_t */
    const int32_t *in0_strides;
    const int32_t *in1_strides;
    const int8_t *in1_const;    /* [in] as in td_add_params_t */
} td_mul_params_t;

/* ---- int8 -> int8 elementwise functions as a table (td_lut_s8_ref) ------------------- *
 * RELU, RELU6, LEAKY_RELU, HARD_SWISH, LOGISTIC, TANH and int8 QUANTIZE map each of the 256
 * int8 inputs to one int8 output; the host evaluates TFLite's integer arithmetic for all
 * 256 of them (bit-exactly) and the device only looks the answers up. */
typedef struct {
    int32_t size;           /* [in] number of elements */
    const int8_t *lut;      /* [in] [256]: out = lut[in + 128] */
} td_lut_params_t;

/* ---- DEQUANTIZE int8 -> float32 (td_dequantize_s8_ref) -------------------------------- */
typedef struct {
    int32_t size;           /* [in] number of elements */
    const uint32_t *lut;    /* [in] [256]: IEEE-754 bits of (float)(scale * (in - zp)) for
                             *      in = -128..127, computed in double on the host as TFLite */
} td_dequantize_params_t;

/* ---- QUANTIZE float32 -> int8 (td_quantize_f32_ref) ----------------------------------- */
typedef struct {
    int32_t size;           /* [in] number of elements */
    uint32_t scale_bits;    /* [in] IEEE-754 bits of the (float) output scale, > 0 */
    int32_t zero_point;     /* [in] output zero point, in [-128, 127] */
} td_quantize_f32_params_t;

/* ---- PAD / PADV2 (td_pad_s8_ref) -------------------------------------------------------- *
 * Shapes right-aligned to 5 dimensions. The output is filled with pad_value, then every
 * innermost input row is copied to its place. */
#define TD_PAD_DIMS 5
typedef struct {
    int32_t pad_value;      /* [in] int8 value of the padding (output zero point, or PADV2's
                             *      constant) */
    const int32_t *in_dims;     /* [in] [TD_PAD_DIMS] */
    const int32_t *out_dims;    /* [in] [TD_PAD_DIMS] in_dims + before + after */
    const int32_t *pad_before;  /* [in] [TD_PAD_DIMS] >= 0 */
} td_pad_params_t;

/* ---- CONCATENATION (td_concatenation_s8_ref) ------------------------------------------- *
 * Called as td_concatenation_s8_ref(&p, in0, ..., in<num_inputs-1>, out0) (variadic: one
 * const int8_t * per input, then the int8_t * output). All inputs share the output's
 * quantization (TFLite requires it), so this is a pure copy. */
typedef struct {
    int32_t num_inputs;     /* [in] 1..10 */
    int32_t outer;          /* [in] product of the output dims before the axis */
    int32_t out_chunk;      /* [in] output axis dim * product of the dims after it */
    const int32_t *chunks;  /* [in] [num_inputs] input i's axis dim * product after it */
} td_concatenation_params_t;

/* ---- STRIDED_SLICE (td_strided_slice_s8_ref) ------------------------------------------- *
 * The host resolves begin/end/strides and the masks into, for 5 right-aligned dims, a count
 * of visited indices and an element step (stride * input row pitch; may be negative). Output
 * element order is row-major over the 5 counts, as TFLite's. */
#define TD_SLICE_DIMS 5
typedef struct {
    int32_t start;          /* [in] element offset of the first element read */
    const int32_t *counts;  /* [in] [TD_SLICE_DIMS] >= 0 */
    const int32_t *steps;   /* [in] [TD_SLICE_DIMS] element steps */
} td_strided_slice_params_t;

/* ---- MEAN over any axes (td_mean_s8_ref) ----------------------------------------------- *
 * Input right-aligned to 6 dims; out_strides[k] is the output element stride of input dim k,
 * 0 for reduced dims. Sums go to an int32 scratch of num_outputs elements. */
#define TD_MEAN_DIMS 6
typedef struct {
    int32_t num_outputs;    /* [in] >= 1 */
    int32_t sum_offset;     /* [in] -input_zero_point * reduced element count */
    int32_t out_mult;       /* [in] multiplier of in_scale / (out_scale * count) (TFLite's) */
    int32_t out_shift;      /* [in] [-31, 30] */
    int32_t out_offset;     /* [in] output zero point */
    const int32_t *in_dims;     /* [in] [TD_MEAN_DIMS] */
    const int32_t *out_strides; /* [in] [TD_MEAN_DIMS] */
} td_mean_params_t;

void td_add_s8_ref(const td_add_params_t *p, const int8_t *in0, const int8_t *in1,
                   int8_t *out0);
/* the same shapes (no broadcasting), the rounding form proven on the host (any core) */
void td_add_s8_opt(const td_add_params_t *p, const int8_t *in0, const int8_t *in1,
                   int8_t *out0);
int32_t td_add_s8_opt_scratch_size(const td_add_params_t *p);
void td_mul_s8_ref(const td_mul_params_t *p, const int8_t *in0, const int8_t *in1,
                   int8_t *out0);
void td_lut_s8_ref(const td_lut_params_t *p, const int8_t *in0, int8_t *out0);
void td_dequantize_s8_ref(const td_dequantize_params_t *p, const int8_t *in0, float *out0);
void td_quantize_f32_ref(const td_quantize_f32_params_t *p, const float *in0, int8_t *out0);
void td_pad_s8_ref(const td_pad_params_t *p, const int8_t *in0, int8_t *out0);
void td_concatenation_s8_ref(const td_concatenation_params_t *p, ...);
void td_strided_slice_s8_ref(const td_strided_slice_params_t *p, const int8_t *in0,
                             int8_t *out0);
void td_mean_s8_ref(const td_mean_params_t *p, const int8_t *in0, int8_t *out0,
                    void *scratch);

/* ---- SVDF, int8 input/output with an int16 or int8 activation state ------------------- *
 * (td_svdf_s8_s16_ref: int16 state and time weights, as the TFLite converter emits;
 *  td_svdf_s8_s8_ref: int8 state and time weights). The state is a variable tensor: it must
 * keep its bytes between invocations (never overlapped in the arena) and start at the state
 * zero point. It is passed as a `const` arena pointer like every input and written through
 * it (the arena is never const). Scratch: int32 [batches * num_filters] then int32
 * [batches * num_units]. The fused activation is ignored, as in TFLM's integer SVDF. */
typedef struct {
    int32_t batches;        /* [in] rows of the input [batches][input_size] */
    int32_t input_size;
    int32_t num_filters;    /* [in] num_units * rank */
    int32_t num_units;
    int32_t rank;           /* [in] >= 1 */
    int32_t memory_size;    /* [in] time steps kept per filter */
    int32_t input_offset;   /* [in] -input_zero_point */
    int32_t state_zp;       /* [in] activation state zero point */
    int32_t output_offset;  /* [in] output_zero_point */
    int32_t mult1, shift1;  /* [in] in_scale * feature_scale / state_scale */
    int32_t mult2, shift2;  /* [in] state_scale * time_scale / out_scale */
    const int8_t *weights_feature; /* [in] [num_filters][input_size] */
    const void *weights_time;      /* [in] [num_filters][memory_size], the state's type */
    const int32_t *bias;           /* [in] [num_units], or NULL */
} td_svdf_params_t;

void td_svdf_s8_s16_ref(const td_svdf_params_t *p, const int8_t *in0, const int16_t *state,
                        int8_t *out0, void *scratch);
void td_svdf_s8_s8_ref(const td_svdf_params_t *p, const int8_t *in0, const int8_t *state,
                       int8_t *out0, void *scratch);

/* ---- UNIDIRECTIONAL_SEQUENCE_LSTM, int8 activations, int8 weights, int16 cell --------- *
 * (td_lstm_s8_ref) TFLM's integer LSTM without peephole, projection or layer norm. Gates in
 * the order input, forget, cell, output; each gate = act(FC(x) + FC(h)) in Q3.12 -> Q0.15,
 * act = the 16-bit sigmoid (tanh for the cell gate), both interpolating `sigmoid_lut`.
 * Hidden state (op input 18, int8) and cell state (op input 19, int16) are variable tensors:
 * they persist across invocations, start at their reset values, and are written through the
 * (const) arena pointers. Scratch: int16 [5][state_size]. */
typedef struct {
    int32_t batches, time_steps, input_size, state_size;
    int32_t time_major;     /* [in] 1: input/output are [T][B][*], 0: [B][T][*] */
    int32_t input_offset;   /* [in] -input_zero_point */
    int32_t hidden_offset;  /* [in] -hidden_state_zero_point */
    int32_t hidden_zp;      /* [in] hidden state (= output) zero point */
    const int8_t *in_weights;   /* [in] [4][state_size][input_size] */
    const int8_t *rec_weights;  /* [in] [4][state_size][state_size] */
    const int32_t *bias;        /* [in] [4][state_size] */
    const int32_t *in_mult, *in_shift;   /* [in] [4] input FC -> Q3.12 */
    const int32_t *rec_mult, *rec_shift; /* [in] [4] recurrent FC -> Q3.12 */
    int32_t forget_mult, forget_shift;   /* [in] forget gate * cell -> cell */
    int32_t input_mult, input_shift;     /* [in] input gate * cell gate -> cell */
    int32_t hidden_mult, hidden_shift;   /* [in] output gate * tanh(cell) -> hidden (int8) */
    int32_t cell_tanh_mult, cell_tanh_shift; /* [in] tanh input rescale of the cell state */
    int32_t cell_clip;      /* [in] quantized |cell| clip, 0 = none */
    const uint16_t *sigmoid_lut; /* [in] [256] sigmoid(i / 24) in Q0.16 (65535 at most) */
    const int64_t *bias64;  /* [in] [4][state_size]: td_lstm_s16_ref's (16x8) bias */
} td_lstm_params_t;

void td_lstm_s8_ref(const td_lstm_params_t *p, const int8_t *in0, const int8_t *hidden,
                    const int16_t *cell, int8_t *out0, void *scratch);

/* ---- optimised Cortex-M variants (firmware/kernels/arm/): the reference kernels' params ---- */
/* Bit-exact with the reference kernels; chosen on the host for cores with the DSP extension
 * (portable C twins of the SIMD intrinsics elsewhere). The scratch is a [in,out] work buffer
 * of ..._scratch_size() bytes in the arena, 4-byte aligned. */
void td_conv2d_s8_dsp(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0,
                      void *scratch);
int32_t td_conv2d_s8_dsp_scratch_size(const td_conv2d_params_t *p);
/* the same where four rows' work does not fit its frame, with fewer rows and no scratch */
void td_conv2d_frame_s8_dsp(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0);
int32_t td_conv2d_frame_s8_dsp_scratch_size(const td_conv2d_params_t *p);
/* one input channel, filters four taps wide (no scratch) */
void td_conv2d_c1_s8_dsp(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0);
int32_t td_conv2d_c1_s8_dsp_scratch_size(const td_conv2d_params_t *p);
/* kernel rows of whole blocks of four values, depth <= 64 (no scratch) */
void td_conv2d_window_s8_dsp(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0);
int32_t td_conv2d_window_s8_dsp_scratch_size(const td_conv2d_params_t *p);
/* the same above depth 64, with fewer rows in its frame (no scratch) */
void td_conv2d_window_frame_s8_dsp(const td_conv2d_params_t *p, const int8_t *in0,
                                   int8_t *out0);
int32_t td_conv2d_window_frame_s8_dsp_scratch_size(const td_conv2d_params_t *p);
/* pointwise with in_c <= 64: no scratch (the rows buffer is in the kernel's frame) */
void td_conv2d_1x1_s8_dsp(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0);
int32_t td_conv2d_1x1_s8_dsp_scratch_size(const td_conv2d_params_t *p);
/* the same product with the pixels taken back to front (its output may trail its input) */
void td_conv2d_1x1_back_s8_dsp(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0);
int32_t td_conv2d_1x1_back_s8_dsp_scratch_size(const td_conv2d_params_t *p);
void td_dwconv2d_3x3_s8_dsp(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0);
int32_t td_dwconv2d_3x3_s8_dsp_scratch_size(const td_dwconv2d_params_t *p);
/* 3x3, strides 1 or 2, no dilation: one channel at a time through widened lines (no scratch) */
void td_dwconv2d_3x3_lines_s8_dsp(const td_dwconv2d_params_t *p, const int8_t *in0,
                                  int8_t *out0);
int32_t td_dwconv2d_3x3_lines_s8_dsp_scratch_size(const td_dwconv2d_params_t *p);
/* 3x3 on the host-widened per-group tables of arm_dsp.wide_dw_table (filter; bias, mult and
 * shift unused), the rounding form only: short maps such as a streamed step's row */
void td_dwconv2d_3x3_wide_s8_dsp(const td_dwconv2d_params_t *p, const int8_t *in0,
                                 int8_t *out0);
int32_t td_dwconv2d_3x3_wide_s8_dsp_scratch_size(const td_dwconv2d_params_t *p);
/* ---- portable optimised kernels (kernels/opt/: cores without the DSP extension) ---- */
void td_conv2d_s8_opt(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0);
int32_t td_conv2d_s8_opt_scratch_size(const td_conv2d_params_t *p);
void td_dwconv2d_s8_opt(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0);
int32_t td_dwconv2d_s8_opt_scratch_size(const td_dwconv2d_params_t *p);
void td_conv2d_1x1_back_s8_opt(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0);
int32_t td_conv2d_1x1_back_s8_opt_scratch_size(const td_conv2d_params_t *p);

void td_avgpool2d_global_s8_dsp(const td_pool2d_params_t *p, const int8_t *in0, int8_t *out0);
int32_t td_avgpool2d_global_s8_dsp_scratch_size(const td_pool2d_params_t *p);
void td_dwconv2d_c1_s8_dsp(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0);
int32_t td_dwconv2d_c1_s8_dsp_scratch_size(const td_dwconv2d_params_t *p);
void td_dwconv2d_s8_dsp(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0);
int32_t td_dwconv2d_s8_dsp_scratch_size(const td_dwconv2d_params_t *p);
void td_fully_connected_s8_dsp(const td_fully_connected_params_t *p, const int8_t *in0,
                               int8_t *out0);
int32_t td_fully_connected_s8_dsp_scratch_size(const td_fully_connected_params_t *p);
/* Cortex-M55 MVE (Helium) variants: chosen only for boards with MVE (their sources #error
 * without it); the reference filter layout and a folded bias (see the .c files). */
void td_conv2d_1x1_s8_mve(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0);
int32_t td_conv2d_1x1_s8_mve_scratch_size(const td_conv2d_params_t *p);
void td_dwconv2d_3x3_s8_mve(const td_dwconv2d_params_t *p, const int8_t *in0, int8_t *out0,
                            void *scratch);
int32_t td_dwconv2d_3x3_s8_mve_scratch_size(const td_dwconv2d_params_t *p);
void td_conv2d_1x1_back_s8_mve(const td_conv2d_params_t *p, const int8_t *in0, int8_t *out0);
int32_t td_conv2d_1x1_back_s8_mve_scratch_size(const td_conv2d_params_t *p);

/* ---- SUB, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, PRELU with broadcasting ----------------- *
 * (td_sub_s8_ref, td_maximum_s8_ref, td_minimum_s8_ref, td_squared_difference_s8_ref,
 * td_prelu_s8_ref). Broadcasting as td_add_params_t. Either operand may be constant: its
 * data is then in0_const or in1_const (flash) and the kernel's argument for it repeats the
 * other (arena) operand. Fields an op does not use are 0. */
typedef struct {
    int32_t left_shift;     /* [in] SUB 20, SQUARED_DIFFERENCE 7, others 0 */
    int32_t in0_offset;     /* [in] -input0_zero_point */
    int32_t in0_mult;       /* [in] Q31 multiplier of input 0 (SUB, SQUARED_DIFFERENCE) */
    int32_t in0_shift;      /* [in] <= 0 */
    int32_t in1_offset;     /* [in] -input1_zero_point (PRELU: -alpha_zero_point) */
    int32_t in1_mult;
    int32_t in1_shift;      /* [in] <= 0 */
    int32_t out_offset;     /* [in] output_zero_point */
    int32_t out_mult;       /* [in] output multiplier (PRELU: of in_scale / out_scale) */
    int32_t out_shift;      /* [in] [-31, 30] */
    int32_t alpha_mult;     /* [in] PRELU: in_scale * alpha_scale / out_scale */
    int32_t alpha_shift;    /* [in] [-31, 30] */
    int32_t act_min, act_max; /* [in] -128 <= act_min <= act_max <= 127 */
    const int32_t *out_dims;    /* [in] [TD_BCAST_DIMS] as in td_add_params_t */
    const int32_t *in0_strides; /* [in] [TD_BCAST_DIMS] */
    const int32_t *in1_strides; /* [in] [TD_BCAST_DIMS] */
    const int8_t *in0_const;    /* [in] constant operand 0 (flash) or NULL */
    const int8_t *in1_const;    /* [in] constant operand 1 (flash) or NULL */
} td_binary_params_t;

void td_sub_s8_ref(const td_binary_params_t *p, const int8_t *in0, const int8_t *in1,
                   int8_t *out0);
void td_maximum_s8_ref(const td_binary_params_t *p, const int8_t *in0, const int8_t *in1,
                       int8_t *out0);
void td_minimum_s8_ref(const td_binary_params_t *p, const int8_t *in0, const int8_t *in1,
                       int8_t *out0);
void td_squared_difference_s8_ref(const td_binary_params_t *p, const int8_t *in0,
                                  const int8_t *in1, int8_t *out0);
void td_prelu_s8_ref(const td_binary_params_t *p, const int8_t *in0, const int8_t *in1,
                     int8_t *out0);

/* ---- TRANSPOSE, DEPTH_TO_SPACE, SPACE_TO_DEPTH (td_transpose_s8_ref) ------------------- *
 * A permutation of up to TD_TRANSPOSE_DIMS dims: output element (i0..i5), written densely in
 * row-major order, is in0[sum(ik * in_strides[k])]. No requantization (TFLM copies). */
#define TD_TRANSPOSE_DIMS 6
typedef struct {
    const int32_t *out_dims;    /* [in] [TD_TRANSPOSE_DIMS] >= 1, right-aligned */
    const int32_t *in_strides;  /* [in] [TD_TRANSPOSE_DIMS] input element stride per dim */
} td_transpose_params_t;

/* ---- SPLIT, SPLIT_V (td_split_s8_ref) ---------------------------------------------------- *
 * Called as td_split_s8_ref(&p, in0, out0, ..., out<num_outputs-1>). Pure copy. */
#define TD_SPLIT_MAX_OUTPUTS 16
typedef struct {
    int32_t num_outputs;    /* [in] 1..TD_SPLIT_MAX_OUTPUTS */
    int32_t outer;          /* [in] product of the input dims before the axis */
    const int32_t *chunks;  /* [in] [num_outputs] output i's axis dim * product after it */
} td_split_params_t;

void td_transpose_s8_ref(const td_transpose_params_t *p, const int8_t *in0, int8_t *out0);
void td_split_s8_ref(const td_split_params_t *p, const int8_t *in0, ...);

/* ---- SUM (td_mean_s8_ref with TFLM's sum multiplier) and REDUCE_MAX ------------------- */
void td_reduce_max_s8_ref(const td_mean_params_t *p, const int8_t *in0, int8_t *out0);

/* ---- RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR (td_resize_nearest_s8_ref, --------------- *
 * td_resize_bilinear_s8_ref), NHWC, output quantization = input's (TFLM copies/interpolates
 * the stored values). */
typedef struct {
    int32_t batches, in_h, in_w, depth; /* [in] input [batches][in_h][in_w][depth] */
    int32_t out_h, out_w;   /* [in] output height/width >= 1 */
    const int32_t *rows;    /* [in] nearest: [out_h] source row; bilinear: [out_h][3] y0, y1,
                             *      Q10 weight of y1 */
    const int32_t *cols;    /* [in] nearest: [out_w] source column; bilinear: [out_w][3] */
} td_resize_params_t;

void td_resize_nearest_s8_ref(const td_resize_params_t *p, const int8_t *in0, int8_t *out0);
void td_resize_bilinear_s8_ref(const td_resize_params_t *p, const int8_t *in0, int8_t *out0);

/* ---- L2_NORMALIZATION along the last dim (td_l2norm_s8_ref) ----------------------------- */
typedef struct {
    int32_t rows;           /* [in] product of all but the last dimension */
    int32_t depth;          /* [in] last dimension, depth * 255^2 < 2^31 */
    int32_t input_zp;       /* [in] input zero point (TFLM's output is 1/128, 0) */
} td_l2norm_params_t;

void td_l2norm_s8_ref(const td_l2norm_params_t *p, const int8_t *in0, int8_t *out0);

/* ---- BATCH_MATMUL (td_batch_matmul_s8_ref) ------------------------------------------------ *
 * out [batches][rows][cols]; lhs element (i, k) of batch b is lhs[lhs_batch_offsets[b] +
 * i * lhs_row_stride + k * lhs_depth_stride], rhs element (k, j) likewise (adj_x/adj_y and
 * the batch broadcast are in these strides and offsets). Either operand may be constant:
 * then its argument repeats the other one and lhs_const/rhs_const point to flash. */
typedef struct {
    int32_t batches, rows, cols, depth; /* [in] output batches (broadcast), A, C, B >= 1 */
    int32_t lhs_row_stride, lhs_depth_stride; /* [in] element strides */
    int32_t rhs_depth_stride, rhs_col_stride;
    int32_t lhs_offset, rhs_offset;   /* [in] -zero points */
    int32_t out_offset;               /* [in] output zero point */
    int32_t out_mult, out_shift;      /* [in] lhs_scale * rhs_scale / out_scale */
    const int32_t *lhs_batch_offsets; /* [in] [batches] element offset of each lhs matrix */
    const int32_t *rhs_batch_offsets; /* [in] [batches] */
    const int8_t *lhs_const, *rhs_const; /* [in] constant operands (flash) or NULL */
} td_batch_matmul_params_t;

void td_batch_matmul_s8_ref(const td_batch_matmul_params_t *p, const int8_t *in0,
                            const int8_t *in1, int8_t *out0);

/* ---- TRANSPOSE_CONV (td_transpose_conv_s8_ref) -------------------------------------------- *
 * Scratch: int32 [batches * out_h * out_w * out_c]. */
typedef struct {
    int32_t batches, in_h, in_w, in_c;  /* [in] input NHWC */
    int32_t out_h, out_w, out_c;        /* [in] output (from the op's output_shape) */
    int32_t filter_h, filter_w;         /* [in] kernel size */
    int32_t stride_h, stride_w;         /* [in] >= 1 */
    int32_t pad_h, pad_w;               /* [in] TFLite's padding of the equivalent conv */
    int32_t input_offset;               /* [in] -input_zero_point */
    int32_t output_offset;              /* [in] output_zero_point */
    int32_t act_min, act_max;           /* [in] fused activation clamp */
    const int8_t *filter;               /* [in] [out_c][filter_h][filter_w][in_c] */
    const int32_t *bias;                /* [in] [out_c] or NULL */
    const int32_t *mult;                /* [in] [out_c] per-channel requantization */
    const int8_t *shift;                /* [in] [out_c] */
} td_transpose_conv_params_t;

void td_transpose_conv_s8_ref(const td_transpose_conv_params_t *p, const int8_t *in0,
                              int8_t *out0, void *scratch);

/* ---- LOG_SOFTMAX along the last dim (td_log_softmax_s8_ref), output 16/256, 127 -------- */
typedef struct {
    int32_t rows;           /* [in] product of all but the last dimension */
    int32_t depth;          /* [in] last dimension, <= 4096 (Q12 accumulation) */
    int32_t diff_min;       /* [in] -CalculateInputRadius(5, input_left_shift), < 0 */
    int32_t rev_mult, rev_shift; /* [in] reverse scaling divisor and its shift (<= 0) */
    const int32_t *q5_lut;  /* [in] [256] diff -d rescaled to Q5.26 (TFLite's multiplier) */
    const int32_t *exp_lut; /* [in] [256] exp(-d) in Q12.19, 0 where -d < diff_min */
} td_log_softmax_params_t;

void td_log_softmax_s8_ref(const td_log_softmax_params_t *p, const int8_t *in0,
                           int8_t *out0);

/* ---- float32 elementwise ops for cores with an FPU (td_elu_f32_ref, td_abs_f32_ref, ---- *
 * td_logistic_f32_ref, td_tanh_f32_ref): the float ops a converter leaves between
 * DEQUANTIZE and QUANTIZE, computed as TFLite Micro's float reference does. */
typedef struct {
    int32_t size;           /* [in] number of elements */
} td_unary_f32_params_t;

void td_elu_f32_ref(const td_unary_f32_params_t *p, const float *in0, float *out0);
void td_abs_f32_ref(const td_unary_f32_params_t *p, const float *in0, float *out0);
void td_logistic_f32_ref(const td_unary_f32_params_t *p, const float *in0, float *out0);
void td_tanh_f32_ref(const td_unary_f32_params_t *p, const float *in0, float *out0);

/* ---- 16x8: int16 activations (zero point 0), int8 weights, int64 bias ------------------ */
typedef struct {
    int32_t batches, accum_depth, out_c; /* [in] as td_fully_connected_params_t */
    int32_t act_min, act_max; /* [in] int16 clamp of the fused activation */
    const int8_t *filter;     /* [in] [out_c][accum_depth] */
    const int64_t *bias;      /* [in] [out_c] or NULL */
    const int32_t *mult;      /* [in] [out_c] */
    const int8_t *shift;      /* [in] [out_c] */
    const int32_t *bias32;    /* [in] [out_c] or NULL: the bias of the _b32 (int32-bias) kernel */
} td_fully_connected_s16_params_t;

typedef struct {
    int32_t batches, in_h, in_w, in_c, out_h, out_w, out_c; /* [in] as td_conv2d_params_t */
    int32_t filter_h, filter_w, filter_c;
    int32_t stride_h, stride_w, dilation_h, dilation_w, pad_h, pad_w;
    int32_t act_min, act_max; /* [in] int16 clamp */
    const int8_t *filter;     /* [in] [out_c][filter_h][filter_w][filter_c] */
    const int64_t *bias;      /* [in] [out_c] or NULL */
    const int32_t *mult;      /* [in] [out_c] */
    const int8_t *shift;      /* [in] [out_c] */
    const int32_t *bias32;    /* [in] [out_c] or NULL: the bias of the _b32 (int32-bias) kernel */
} td_conv2d_s16_params_t;

typedef struct {
    int32_t batches, in_h, in_w, in_c, out_h, out_w, out_c; /* [in] as td_dwconv2d_params_t */
    int32_t depth_multiplier, filter_h, filter_w;
    int32_t stride_h, stride_w, dilation_h, dilation_w, pad_h, pad_w;
    int32_t act_min, act_max; /* [in] int16 clamp */
    const int8_t *filter;     /* [in] [filter_h][filter_w][out_c] */
    const int64_t *bias;      /* [in] [out_c] or NULL */
    const int32_t *mult;      /* [in] [out_c] */
    const int8_t *shift;      /* [in] [out_c] */
} td_dwconv2d_s16_params_t;

void td_dwconv2d_s16_ref(const td_dwconv2d_s16_params_t *p, const int16_t *in0,
                         int16_t *out0);
/* ADD int16 with broadcasting: td_add_params_t (left_shift 15, in1_const NULL) */
void td_add_s16_ref(const td_add_params_t *p, const int16_t *in0, const int16_t *in1,
                    int16_t *out0);
/* SUB int16 with broadcasting: td_add_params_t (left_shift 15, in1_const NULL) */
void td_sub_s16_ref(const td_add_params_t *p, const int16_t *in0, const int16_t *in1,
                    int16_t *out0);
/* MUL int16 with broadcasting: td_mul_params_t (offsets 0, in1_const NULL) */
void td_mul_s16_ref(const td_mul_params_t *p, const int16_t *in0, const int16_t *in1,
                    int16_t *out0);
/* MEAN / SUM int16: td_mean_params_t, int16 data, int32 scratch [num_outputs] */
void td_mean_s16_ref(const td_mean_params_t *p, const int16_t *in0, int16_t *out0,
                     void *scratch);
/* CONCATENATION int16: td_concatenation_params_t (chunks in elements), variadic */
void td_concatenation_s16_ref(const td_concatenation_params_t *p, ...);
/* SOFTMAX int8 -> int16 (output 1/65536, -32768): td_softmax_params_t, int16 output */
void td_softmax_s8_s16_ref(const td_softmax_params_t *p, const int8_t *in0, int16_t *out0);
/* int16 pooling: td_pool2d_params_t with an int16 clamp (input/output quantization equal) */
void td_avgpool2d_s16_ref(const td_pool2d_params_t *p, const int16_t *in0, int16_t *out0);
void td_maxpool2d_s16_ref(const td_pool2d_params_t *p, const int16_t *in0, int16_t *out0);

/* QUANTIZE between integer types (td_quantize_<in>_<out>_ref): TFLite's Requantize. */
typedef struct {
    int32_t size;           /* [in] elements */
    int32_t in_zp, out_zp;  /* [in] zero points */
    int32_t mult, shift;    /* [in] in_scale / out_scale */
} td_requant_params_t;

/* DEQUANTIZE int16 -> float32: scale as the two 32-bit halves of an IEEE-754 double. */
typedef struct {
    int32_t size;
    uint32_t scale_hi, scale_lo;
    int32_t zero_point;
} td_dequantize_s16_params_t;

void td_fully_connected_s16_ref(const td_fully_connected_s16_params_t *p, const int16_t *in0,
                                int16_t *out0);
void td_conv2d_s16_ref(const td_conv2d_s16_params_t *p, const int16_t *in0, int16_t *out0);
void td_quantize_s16_s8_ref(const td_requant_params_t *p, const int16_t *in0, int8_t *out0);
void td_quantize_s8_s16_ref(const td_requant_params_t *p, const int8_t *in0, int16_t *out0);
void td_quantize_s16_s16_ref(const td_requant_params_t *p, const int16_t *in0,
                             int16_t *out0);
void td_quantize_s16_s32_ref(const td_requant_params_t *p, const int16_t *in0,
                             int32_t *out0);
void td_quantize_s8_s32_ref(const td_requant_params_t *p, const int8_t *in0, int32_t *out0);
void td_dequantize_s16_ref(const td_dequantize_s16_params_t *p, const int16_t *in0,
                           float *out0);

/* int16 data movement (TFLM's int16 kernels): the int8 kernels' params, counts, strides and
 * offsets in elements; one body per op for both element types (td_<op>_body.h). */
void td_transpose_s16_ref(const td_transpose_params_t *p, const int16_t *in0, int16_t *out0);
void td_split_s16_ref(const td_split_params_t *p, const int16_t *in0, ...);
/* float32 SPLIT / SPLIT_V (a float island between DEQUANTIZE and QUANTIZE; cores with an
 * FPU and the host): the same body on float elements. */
void td_split_f32_ref(const td_split_params_t *p, const float *in0, ...);
void td_pad_s16_ref(const td_pad_params_t *p, const int16_t *in0, int16_t *out0);
void td_strided_slice_s16_ref(const td_strided_slice_params_t *p, const int16_t *in0,
                              int16_t *out0);
void td_resize_nearest_s16_ref(const td_resize_params_t *p, const int16_t *in0,
                               int16_t *out0);

/* LOGISTIC, TANH int16 (td_logistic_s16_ref, td_tanh_s16_ref): TFLM's table of
 * sigmoid(i / 24) with linear interpolation; zero points 0, output scale 2^-15. */
typedef struct {
    int32_t size;           /* [in] elements */
    int32_t mult, shift;    /* [in] x = (in * mult + 2^(shift-1)) >> shift; mult <= 32767,
                             *      shift in [0, 31] (TFLM's factor 3 folded in) */
    const uint16_t *lut;    /* [in] [256] sigmoid(i / 24) in unsigned Q0.16 */
} td_sigmoid16_params_t;

void td_logistic_s16_ref(const td_sigmoid16_params_t *p, const int16_t *in0, int16_t *out0);
void td_tanh_s16_ref(const td_sigmoid16_params_t *p, const int16_t *in0, int16_t *out0);

/* 16x8 FULLY_CONNECTED / CONV_2D with an int32 bias (p->bias32): TFLM's int32 accumulator */
void td_fully_connected_s16_b32_ref(const td_fully_connected_s16_params_t *p,
                                    const int16_t *in0, int16_t *out0);
void td_conv2d_s16_b32_ref(const td_conv2d_s16_params_t *p, const int16_t *in0, int16_t *out0);

/* SOFTMAX int16 -> int16 (td_softmax_s16_ref): TFLM's SoftmaxInt16 with its two tables */
typedef struct {
    int32_t rows, depth;    /* [in] outer size, last axis >= 1 */
    int32_t mult, shift;    /* [in] input scale * beta / (10 / 65535) (TFLite's multiplier) */
    const int16_t *exp_lut; /* [in] [513] exp over [-10, 0] in Q0.15 */
    const int16_t *inv_lut; /* [in] [513] 1 / (1 + x) over [0, 1] in Q0.15 */
} td_softmax_s16_params_t;

void td_softmax_s16_ref(const td_softmax_s16_params_t *p, const int16_t *in0, int16_t *out0);

/* UNIDIRECTIONAL_SEQUENCE_LSTM 16x8: td_lstm_params_t with bias64, int16 hidden state */
void td_lstm_s16_ref(const td_lstm_params_t *p, const int16_t *in0, const int16_t *hidden,
                     const int16_t *cell, int16_t *out0, void *scratch);

/* MAXIMUM / MINIMUM int16: td_binary_params_t, both operands in the arena */
void td_maximum_s16_ref(const td_binary_params_t *p, const int16_t *in0, const int16_t *in1,
                        int16_t *out0);
void td_minimum_s16_ref(const td_binary_params_t *p, const int16_t *in0, const int16_t *in1,
                        int16_t *out0);

/* (structs and prototypes of the other ops go between the marker above and these lines) */
/* ---- SOFTMAX int8 with the exp computed on the device (td_softmax_s8_exp_ref) -------- */
typedef struct {
    int32_t rows;        /* [in] product of all but the last dimension */
    int32_t depth;       /* [in] last dimension, the softmax axis */
    int32_t multiplier;  /* [in] > 2^30: beta * input_scale as Q5.26 per input step (TFLite's
                          *      PreprocessSoftmaxScaling), with left_shift */
    int32_t left_shift;  /* [in] in [0, 31] */
    int32_t diff_min;    /* [in] <= 0: differences to the row maximum below it give 0 */
} td_softmax_exp_params_t;

void td_softmax_s8_exp_ref(const td_softmax_exp_params_t *p, const int8_t *in0, int8_t *out0);

#ifdef __cplusplus
}
#endif

#endif /* TD_KERNELS_H */
