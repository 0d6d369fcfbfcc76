/*
 * td_gemm_s8_dsp.c - the one out-of-line piece of td_gemm_s8_dsp.h: the general (not
 * proven, or clamped) requantization of one output, shared by every dsp kernel of a build
 * that includes the header.
 */
#include "td_gemm_s8_dsp.h"

int8_t td_gemm_out_general(int32_t acc, int32_t m, int32_t shift, int32_t out_off, int32_t lo,
                           int32_t hi, int32_t round_form)
{
    const int32_t es = round_form ? -shift : shift;
    const int32_t r = round_form ? td_requant_rnd(2 * out_off + 1, es) : 0;
    return td_gemm_clamp(td_gemm_value(acc, m, es, r, out_off, round_form), lo, hi, 0);
}
