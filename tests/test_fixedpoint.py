"""Unit tests of the fixed-point twins: hand-derived values, properties, and the C twin
(td_requant.h) against the Python one."""

from __future__ import annotations

import math
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tinydeploy import fixedpoint as fp
from tinydeploy.testing.harness import KERNEL_INCLUDE

I32 = st.integers(min_value=fp.INT32_MIN, max_value=fp.INT32_MAX)


def test_round_half_away_from_zero() -> None:
    assert [fp.round_half_away(v) for v in (0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999, -2.6)] \
        == [1, 2, 3, -1, -2, -3, 2, -3]


@pytest.mark.parametrize("real, expected", [
    (0.0, (0, 0)),
    (0.5, (1 << 30, 0)),                      # frexp(0.5) = 0.5 * 2^0
    (1.0, (1 << 30, 1)),                      # 0.5 * 2^1
    (0.75, (3 << 29, 0)),                     # 0.75 * 2^31 = 3 * 2^29 exactly
    (3.0, (3 << 29, 2)),                      # 0.75 * 2^2
    (1.0 - 2.0 ** -40, (1 << 30, 1)),         # Q31 rounds up to 2^31: renormalised
    (2.0 ** -40, (0, 0)),                     # shift -39 < -31: flushed to zero
    (2.0 ** -32, (1 << 30, -31)),             # the smallest shift kept
])
def test_quantize_multiplier_hand_values(real: float, expected: tuple[int, int]) -> None:
    assert fp.quantize_multiplier(real) == expected


def test_quantize_multiplier_rounds_half_away() -> None:
    # q = 0.5 + 2^-32 is exactly half-way between two Q31 steps: rounds up (away from zero)
    q, shift = fp.quantize_multiplier(0.5 + 2.0 ** -32)
    assert (q, shift) == ((1 << 30) + 1, 0)


def test_smaller_than_one_and_greater_than_one() -> None:
    assert fp.quantize_multiplier_smaller_than_one_exp(0.25) == (1 << 30, -1)
    assert fp.quantize_multiplier_greater_than_one(6.0) == (3 << 29, 3)
    with pytest.raises(ValueError):
        fp.quantize_multiplier_smaller_than_one_exp(1.5)
    with pytest.raises(ValueError):
        fp.quantize_multiplier_greater_than_one(0.5)


@pytest.mark.parametrize("x, e, expected", [
    (5, 1, 3), (-5, 1, -3), (3, 1, 2), (-3, 1, -2), (4, 2, 1), (6, 2, 2), (-6, 2, -2),
    (2, 2, 1), (-2, 2, -1), (1, 2, 0), (-1, 2, 0), (7, 0, 7), (fp.INT32_MIN, 31, -1),
])
def test_rounding_divide_by_pot(x: int, e: int, expected: int) -> None:
    assert fp.rounding_divide_by_pot(x, e) == expected


def test_srdhm_hand_values() -> None:
    assert fp.saturating_rounding_doubling_high_mul(fp.INT32_MIN, fp.INT32_MIN) == fp.INT32_MAX
    assert fp.saturating_rounding_doubling_high_mul(1 << 30, 1 << 30) == 1 << 29  # .5*.5
    assert fp.saturating_rounding_doubling_high_mul(3, 1 << 30) == 2      # 1.5 -> 2
    # gemmlowp's nudge makes -1.5 round toward zero, unlike RoundingDivideByPOT
    assert fp.saturating_rounding_doubling_high_mul(-3, 1 << 30) == -1


def test_multiply_by_quantized_multiplier_hand_values() -> None:
    m = fp.multiply_by_quantized_multiplier
    assert m(100, 1 << 30, 0) == 50
    assert m(100, 1 << 30, -1) == 25
    assert m(10, 1 << 30, 2) == 20
    assert m(3, 1 << 30, -1) == 1     # 0.75: SRDHM gives 2, then 2/2 = 1
    assert m(-3, 1 << 30, -1) == -1   # -0.75: SRDHM gives -1, then -1/2 -> -1 (half away)
    assert m(5, 1 << 30, -2) == 1     # 0.625 -> SRDHM 3 (2.5 up), 3/4 -> 1


@settings(max_examples=300, deadline=None)
@given(x=st.integers(-(1 << 24), 1 << 24),
       real=st.floats(min_value=2.0 ** -20, max_value=4.0, allow_nan=False))
def test_requantize_error_bound(x: int, real: float) -> None:
    q, s = fp.quantize_multiplier(real)
    got = fp.multiply_by_quantized_multiplier(x, q, s)
    # double rounding: at most one unit from the exact product (plus the multiplier's error)
    assert abs(got - x * real) <= 1.0 + abs(x) * real * 2.0 ** -30


@settings(max_examples=100, deadline=None)
@given(real=st.floats(min_value=2.0 ** -20, max_value=8.0, allow_nan=False),
       xs=st.lists(st.integers(-(1 << 20), 1 << 20), min_size=2, max_size=20))
def test_requantize_is_monotonic(real: float, xs: list[int]) -> None:
    q, s = fp.quantize_multiplier(real)
    xs = sorted(xs)
    ys = [fp.multiply_by_quantized_multiplier(x, q, s) for x in xs]
    assert ys == sorted(ys)


@settings(max_examples=50, deadline=None)
@given(xs=st.lists(I32, min_size=1, max_size=50), q=st.integers(0, fp.INT32_MAX),
       shift=st.integers(-31, 8))
def test_vectorised_equals_scalar(xs: list[int], q: int, shift: int) -> None:
    got = fp.multiply_by_quantized_multiplier_np(np.array(xs, dtype=np.int64), q, shift)
    want = [fp.multiply_by_quantized_multiplier(x, q, shift) for x in xs]
    assert got.tolist() == want


def test_exp_and_reciprocal_are_accurate() -> None:
    assert fp.exp_on_negative_values(0, 5) == fp.INT32_MAX
    for v in (-0.01, -0.25, -0.5, -1.0, -3.3, -7.9, -15.0):
        raw = int(round(v * (1 << 26)))
        got = fp.exp_on_negative_values(raw, 5) / 2.0 ** 31
        assert abs(got - math.exp(v)) < 2e-6, v
    for x in (0.0, 0.1, 0.5, 0.9, 0.999):
        got = fp.one_over_one_plus_x_for_x_in_0_1(int(x * 2 ** 31)) / 2.0 ** 31
        assert abs(got - 1 / (1 + x)) < 1e-6, x
    recip, bits = fp.get_reciprocal(3 << 19, 12)    # 3.0 in Q12.19
    assert abs(recip / 2.0 ** 31 * 2.0 ** -bits - 1 / 3) < 1e-6


def test_c_requantize_matches_python(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(5)
    xs = np.concatenate([rng.integers(fp.INT32_MIN, fp.INT32_MAX, 400, dtype=np.int64),
                         rng.integers(-70000, 70000, 400), [fp.INT32_MIN, fp.INT32_MAX, 0, -1]])
    ms = rng.integers(1 << 30, 1 << 31, xs.size, dtype=np.int64)
    ss = rng.integers(-31, 3, xs.size)
    ms[:3] = fp.INT32_MAX                      # the largest multiplier
    rows = "\n".join(f"{{{int(x)}LL, {int(m)}LL, {int(s)}}},"
                     for x, m, s in zip(xs, ms, ss, strict=True))
    src = tmp_path / "t.c"
    src.write_text(f"""#include <stdio.h>
#include "td_requant.h"
static const long long v[][3] = {{
{rows}
}};
int main(void) {{
    for (unsigned i = 0; i < sizeof v / sizeof v[0]; ++i)
        printf("%ld\\n", (long)td_requantize((int32_t)v[i][0], (int32_t)v[i][1],
                                              (int32_t)v[i][2]));
    return 0;
}}
""")
    exe = tmp_path / "t"
    subprocess.run(["gcc", "-std=c99", "-O1", "-fsanitize=undefined", "-fno-sanitize-recover=all",
                    "-I", str(KERNEL_INCLUDE), str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, check=True, text=True).stdout.split()
    want = [fp.multiply_by_quantized_multiplier(int(x), int(m), int(s))
            for x, m, s in zip(xs, ms, ss, strict=True)]
    assert [int(o) for o in out] == want


# ---- the rounding form of the requantization (td_requant.h: td_requant_round_form) --------

def _rounding_form_cases(n: int, seed: int) -> list[tuple[int, int, int, int]]:
    """(acc, multiplier, shift, zp) inside the rounding form's preconditions: random ones,
    the extreme multipliers (2^30, 2^31 - 1), every shift, zero points at the int8 ends,
    accumulators at the proven bound, and exact ties of both roundings (m = 2^30 makes every
    odd accumulator a tie of the doubling high multiply; acc = 2 * (q * 2^e +- 2^(e-1)) with
    m = 2^30 is a tie of the divide by 2^e)."""
    rng = np.random.default_rng(seed)
    cases = []
    for i in range(n):
        e = int(rng.integers(1, 32))
        zp = int(rng.choice([-128, 127, 0, -1, int(rng.integers(-128, 128))]))
        while abs(2 * zp + 1) << e > fp.INT32_MAX:
            e -= 1
        r = fp.rounding_form_rnd(-e, zp)
        bound = min((1 << 30) - 1, fp.INT32_MAX - 2 - abs(r))
        kind = i % 5
        m = int(rng.choice([1 << 30, fp.INT32_MAX, int(rng.integers(1 << 30, 1 << 31))]))
        if kind == 0:
            acc = int(rng.integers(-bound, bound + 1))
        elif kind == 1:
            acc, m = int(rng.integers(-bound // 2, bound // 2)) * 2 + 1, 1 << 30
        elif kind == 2:
            q = int(rng.integers(-(bound >> (e + 1)), (bound >> (e + 1)) + 1))
            acc, m = 2 * ((q << e) + int(rng.choice([-1, 1])) * (1 << (e - 1))), 1 << 30
        elif kind == 3:
            acc = int(rng.choice([bound, -bound, 0, 1, -1]))
        else:
            acc = int(rng.integers(-(1 << 16), 1 << 16))
        if abs(acc) <= bound:
            cases.append((acc, m, -e, zp))
    return cases


def test_rounding_form_equals_tflite() -> None:
    """Wherever rounding_form_holds, the rounding form is MultiplyByQuantizedMultiplier + zp,
    on random operands, extreme multipliers and shifts, and exact ties."""
    cases = _rounding_form_cases(30000, seed=3)
    assert len(cases) > 25000
    for acc, m, shift, zp in cases:
        assert fp.rounding_form_holds(abs(acc), m, shift, zp), (acc, m, shift, zp)
        assert fp.requantize_rounding_form(acc, m, shift, zp) == \
            fp.multiply_by_quantized_multiplier(acc, m, shift) + zp, (acc, m, shift, zp)


def test_rounding_form_preconditions_are_tight() -> None:
    """Outside its preconditions the form is refused, and there it can indeed be wrong."""
    assert not fp.rounding_form_holds(0, 1 << 30, 0, 0)          # no right shift
    assert not fp.rounding_form_holds(0, 1 << 30, 3, 0)          # a left shift
    assert not fp.rounding_form_holds(1 << 30, 1 << 30, -1, 0)   # 2 * acc overflows
    assert not fp.rounding_form_holds(10, 1 << 30, -31, 1)       # (2zp+1) * 2^e overflows
    assert not fp.rounding_form_holds(10, 0, -3, 0)              # multiplier 0
    assert fp.rounding_form_holds((1 << 30) - 1, fp.INT32_MAX, -1, 0)
    # 2 * acc wrapping: a bound of 2^30 is exactly where the form breaks
    acc = 1 << 30
    assert fp.requantize_rounding_form(acc, fp.INT32_MAX, -1, 0) != \
        fp.multiply_by_quantized_multiplier(acc, fp.INT32_MAX, -1)


def test_accumulator_bound_covers_every_input() -> None:
    rng = np.random.default_rng(9)
    for off in (-127, 128, 0, 5):
        rows = rng.integers(-128, 128, size=(4, 37)).astype(np.int8)
        bias = rng.integers(-1000, 1000, size=4)
        bound = fp.accumulator_bound(rows, bias, off)
        for x in (np.full(37, -128), np.full(37, 127), rng.integers(-128, 128, 37)):
            acc = ((x + off) * rows.astype(np.int64)).sum(axis=1) + bias
            assert np.all(np.abs(acc) <= bound)
        worst = np.where(rows >= 0, 127 if off >= -0.5 else -128, -128 if off >= -0.5 else 127)
        acc = ((worst + off) * rows.astype(np.int64)).sum(axis=1)
        assert np.all(np.abs(acc) <= bound)


def test_c_rounding_form_matches_python(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cases = _rounding_form_cases(3000, seed=4)
    rows = "\n".join(f"{{{a}LL, {m}LL, {-s}, {z}}}," for a, m, s, z in cases)
    src = tmp_path / "t.c"
    src.write_text(f"""#include <stdio.h>
#include "td_requant.h"
static const long long v[][4] = {{
{rows}
}};
int main(void) {{
    for (unsigned i = 0; i < sizeof v / sizeof v[0]; ++i) {{
        const int32_t e = (int32_t)v[i][2];
        printf("%ld\\n", (long)td_requant_round_form((int32_t)v[i][0], (int32_t)v[i][1], e,
                                                      td_requant_rnd(2 * (int32_t)v[i][3] + 1,
                                                                     e)));
    }}
    return 0;
}}
""")
    exe = tmp_path / "t"
    subprocess.run(["gcc", "-std=c99", "-O1", "-fsanitize=undefined", "-fno-sanitize-recover=all",
                    "-I", str(KERNEL_INCLUDE), str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, check=True, text=True).stdout.split()
    assert [int(o) for o in out] == [fp.multiply_by_quantized_multiplier(a, m, s) + z
                                     for a, m, s, z in cases]
