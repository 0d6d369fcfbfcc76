"""Golden cases of PAD, PADV2, CONCATENATION, STRIDED_SLICE and MEAN, declared as data."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tinydeploy.kernels.shape_ops import strided_slice_plan
from tinydeploy.model.ir import ConcatenationOptions, ReducerOptions, StridedSliceOptions
from tinydeploy.testing.builder import ModelBuilder

try:
    from golden_ops import Built, int8_inputs
except ImportError:  # pragma: no cover - when tests/golden is a package
    from .golden_ops import Built, int8_inputs


def _data(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray:
    """Uniform random int8 or int16 test data."""
    if dtype == "int16":
        return rng.integers(-32768, 32768, size=shape).astype(np.int16)
    return int8_inputs(shape, "random", rng)


@dataclass(frozen=True)
class PadCase:
    shape: tuple[int, ...]
    pads: tuple[tuple[int, int], ...]
    zp: int = 7
    value: int | None = None  # PADV2's constant; None = PAD
    seed: int = 0
    dtype: str = "int8"       # int16: 16x8 tensors (zero point 0, zp ignored)

    @property
    def op(self) -> str:
        return "PAD" if self.value is None else "PADV2"

    @property
    def name(self) -> str:
        op = "PAD" if self.value is None else f"PADV2({self.value})"
        return f"{op} {self.dtype} {list(self.shape)} {list(self.pads)} zp={self.zp}"

    def build(self) -> Built:
        rng = np.random.default_rng(self.seed)
        b = ModelBuilder()
        zp = 0 if self.dtype == "int16" else self.zp
        x = b.tensor("x", self.shape, self.dtype, scale=0.1, zero_point=zp)
        p = b.tensor("p", (len(self.shape), 2), "int32",
                     data=np.array(self.pads, dtype=np.int32))
        out = tuple(s + a + c for s, (a, c) in zip(self.shape, self.pads, strict=True))
        y = b.tensor("y", out, self.dtype, scale=0.1, zero_point=zp)
        ins = [x, p]
        if self.value is not None:
            ins.append(b.tensor("c", (), self.dtype, scale=0.1, zero_point=zp,
                                data=np.array([self.value])))
        b.op("PAD" if self.value is None else "PADV2", ins, [y])
        return Built(self.name, b.build([x], [y]), (_data(self.shape, self.dtype, rng),))


@dataclass(frozen=True)
class ConcatCase:
    shapes: tuple[tuple[int, ...], ...]
    axis: int
    q: tuple[float, int] = (0.1, 7)
    seed: int = 0

    @property
    def name(self) -> str:
        return f"CONCATENATION {[list(s) for s in self.shapes]} axis={self.axis}"

    def build(self) -> Built:
        rng = np.random.default_rng(self.seed)
        b = ModelBuilder()
        xs = [b.tensor(f"x{k}", s, "int8", scale=self.q[0], zero_point=self.q[1])
              for k, s in enumerate(self.shapes)]
        rank = len(self.shapes[0])
        ax = self.axis % rank
        out = list(self.shapes[0])
        out[ax] = sum(s[ax] for s in self.shapes)
        y = b.tensor("y", out, "int8", scale=self.q[0], zero_point=self.q[1])
        b.op("CONCATENATION", xs, [y], ConcatenationOptions(self.axis))
        return Built(self.name, b.build(xs, [y]),
                     tuple(int8_inputs(s, "random", rng) for s in self.shapes))


@dataclass(frozen=True)
class SliceCase:
    shape: tuple[int, ...]
    begin: tuple[int, ...]
    end: tuple[int, ...]
    strides: tuple[int, ...]
    begin_mask: int = 0
    end_mask: int = 0
    shrink_mask: int = 0
    seed: int = 0
    dtype: str = "int8"       # int16: 16x8 tensors (zero point 0)
    op = "STRIDED_SLICE"

    @property
    def name(self) -> str:
        return (f"STRIDED_SLICE {self.dtype} {list(self.shape)} b={list(self.begin)} "
                f"e={list(self.end)} "
                f"s={list(self.strides)} masks={self.begin_mask},{self.end_mask},"
                f"{self.shrink_mask}")

    def out_shape(self) -> list[int]:
        return strided_slice_plan(self.shape, list(self.begin), list(self.end),
                                  list(self.strides), self.begin_mask, self.end_mask,
                                  self.shrink_mask)[3]

    def build(self) -> Built:
        rng = np.random.default_rng(self.seed)
        b = ModelBuilder()
        n = len(self.shape)
        zp = 0 if self.dtype == "int16" else -3
        x = b.tensor("x", self.shape, self.dtype, scale=0.1, zero_point=zp)
        idx = [b.tensor(nm, (n,), "int32", data=np.array(v, dtype=np.int32))
               for nm, v in (("begin", self.begin), ("end", self.end),
                             ("strides", self.strides))]
        y = b.tensor("y", self.out_shape(), self.dtype, scale=0.1, zero_point=zp)
        b.op("STRIDED_SLICE", [x, *idx], [y],
             StridedSliceOptions(self.begin_mask, self.end_mask, 0, 0, self.shrink_mask))
        return Built(self.name, b.build([x], [y]), (_data(self.shape, self.dtype, rng),))


@dataclass(frozen=True)
class MeanCase:
    shape: tuple[int, ...]
    axes: tuple[int, ...]
    keep_dims: bool = True
    in_q: tuple[float, int] = (0.1, -7)
    out_q: tuple[float, int] = (0.07, 3)
    data: str = "random"
    seed: int = 0
    tags: tuple[str, ...] = field(default=())

    @property
    def name(self) -> str:
        return (f"MEAN {list(self.shape)} axes={list(self.axes)} keep={self.keep_dims} "
                f"q={self.in_q}->{self.out_q} {self.data}")

    def build(self) -> Built:
        rng = np.random.default_rng(self.seed)
        rank = len(self.shape)
        res = {(a + rank) % rank for a in self.axes}
        if self.keep_dims:
            out = [1 if d in res else self.shape[d] for d in range(rank)]
        else:
            out = [self.shape[d] for d in range(rank) if d not in res]
        b = ModelBuilder()
        x = b.tensor("x", self.shape, "int8", scale=self.in_q[0], zero_point=self.in_q[1])
        a = b.tensor("axis", (len(self.axes),), "int32",
                     data=np.array(self.axes, dtype=np.int32))
        y = b.tensor("y", out, "int8", scale=self.out_q[0], zero_point=self.out_q[1])
        b.op("MEAN", [x, a], [y], ReducerOptions(self.keep_dims))
        return Built(self.name, b.build([x], [y]),
                     (int8_inputs(self.shape, self.data, rng, self.in_q[1]),))


def default_cases() -> list[PadCase | ConcatCase | SliceCase | MeanCase]:
    cases: list[PadCase | ConcatCase | SliceCase | MeanCase] = [
        PadCase((1, 3, 4, 2), ((0, 0), (1, 2), (0, 1), (0, 0))),
        PadCase((1, 5, 5, 3), ((0, 0), (2, 2), (2, 2), (0, 0)), zp=-128),
        PadCase((2, 3, 2, 4, 2), ((1, 0), (1, 2), (0, 1), (3, 0), (1, 1)), zp=127),
        PadCase((7,), ((3, 5),), zp=0),
        PadCase((3, 4), ((0, 0), (0, 0))),
        PadCase((2, 3, 4), ((1, 1), (0, 2), (2, 0)), zp=-50),
        PadCase((1, 4, 4, 3), ((0, 0), (1, 1), (1, 1), (0, 0)), value=-5),
        PadCase((2, 3, 2, 4, 2), ((1, 0), (1, 2), (0, 1), (3, 0), (1, 1)), zp=-128,
                value=127),
        PadCase((5, 6), ((2, 0), (0, 3)), zp=40, value=-128),
        ConcatCase(((2, 3, 4), (2, 5, 4), (2, 1, 4)), 1),
        ConcatCase(((2, 3, 4), (2, 3, 1)), -1, (0.02, -128)),
        ConcatCase(((1, 3, 4), (2, 3, 4)), 0, (0.5, 127)),
        ConcatCase(((1, 4, 4, 8), (1, 4, 4, 8), (1, 4, 4, 3), (1, 4, 4, 1)), 3),
        ConcatCase(((1, 2, 4, 3), (1, 2, 1, 3)), 2),
        ConcatCase(((5,), (7,), (1,)), 0),
        ConcatCase(tuple((1, 2, k + 1) for k in range(10)), 2),
        ConcatCase(((3, 2),), 1),
        SliceCase((4, 6, 5), (1, 0, -1), (3, 6, 0), (1, 2, -1)),
        SliceCase((4, 6, 5), (1, 0, -1), (3, 6, 0), (1, 2, -2), 2, 4, 1),
        SliceCase((1, 8, 8, 3), (0, 1, 1, 0), (1, 7, 7, 3), (1, 2, 3, 1)),
        SliceCase((1, 8, 8, 3), (0, 0, 0, 0), (0, 0, 0, 0), (1, 1, 1, 1), 15, 15),
        SliceCase((1, 8, 8, 3), (0, -1, 0, 1), (1, 0, 8, 2), (1, -1, 1, 1), 1, 1, 8),
        SliceCase((10,), (-3,), (100,), (1,)),
        SliceCase((10,), (8,), (-100,), (-3,)),
        SliceCase((6, 7), (-1, 6), (-7, -8), (-1, -2)),
        SliceCase((6, 7), (2, 3), (4, 5), (1, 1), 0, 0, 3),
        SliceCase((3, 4, 5, 6), (0, 1, 2, 3), (3, 4, 5, 6), (2, 2, 2, 2)),
        SliceCase((3, 4, 5, 6), (-1, -1, -1, -1), (0, 0, 0, 0), (1, -1, -1, -2), 0, 0, 1),
        SliceCase((3, 4, 5, 6), (1, 0, 0, 0), (2, 4, 5, 6), (1, 1, 1, 1), 14, 14, 1),
        SliceCase((4, 4), (1, 1), (3, 3), (5, 5)),
        SliceCase((2, 3), (1, -9), (9, 9), (1, 1)),
        MeanCase((1, 5, 7, 3), (1, 2)),
        MeanCase((1, 5, 7, 3), (2, 1), False),
        MeanCase((2, 5, 7, 3), (0, -1), False),
        MeanCase((2, 5, 7, 3), (2,), False, (0.5, 0), (0.01, -128)),
        MeanCase((1, 10, 10, 16), (1, 2), True, (0.02, -128), (0.02, -128), "extreme"),
        MeanCase((1, 10, 10, 16), (1, 2), True, (0.5, 127), (0.25, 127), "extreme"),
        MeanCase((4, 6), (1,), True, (0.3, 0), (0.2, 0)),
        MeanCase((4, 6), (0, 1), False, (0.3, 0), (0.2, 0)),
        MeanCase((3, 4, 5), (1, 1, -2), True),
        MeanCase((64,), (0,), False, (0.125, 0), (0.25, 0)),
        MeanCase((2, 3, 4, 5, 6), (0, 2, 4), False, (0.05, 20), (0.01, -30)),
        MeanCase((2, 3, 2, 3, 2, 3), (1, 3, 5), True, (0.05, -20), (0.05, 10)),
        MeanCase((1, 49, 1, 64), (1, 2), True, (0.1, -128), (0.004, -128)),
        MeanCase((1, 3, 3, 4), (3,), False, (0.001, 0), (1.0, 0)),
    ]
    return cases


def sweep_cases(n: int = 120, seed: int = 7) -> list[SliceCase | MeanCase]:
    rng = np.random.default_rng(seed)
    out: list[SliceCase | MeanCase] = []
    for k in range(n):
        rank = int(rng.integers(1, 5))
        shape = tuple(int(v) for v in rng.integers(1, 7, size=rank))
        if k % 2:
            strides = tuple(int(rng.choice([-3, -2, -1, 1, 2, 3])) for _ in shape)
            begin = tuple(int(rng.integers(-8, 8)) for _ in shape)
            end = tuple(int(rng.integers(-8, 8)) for _ in shape)
            out.append(SliceCase(shape, begin, end, strides, int(rng.integers(0, 1 << rank)),
                                 int(rng.integers(0, 1 << rank)),
                                 int(rng.integers(0, 1 << rank)) if k % 3 == 0 else 0, seed=k))
        else:
            axes = tuple(int(a) for a in rng.choice(rank, size=int(rng.integers(1, rank + 1)),
                                                    replace=False))
            out.append(MeanCase(shape, axes, bool(k % 4), (float(10 ** rng.uniform(-2, 0)),
                                                          int(rng.integers(-128, 128))),
                                (float(10 ** rng.uniform(-2, 0)), int(rng.integers(-128, 128))),
                                seed=k))
    return out


def int16_cases() -> list[PadCase | SliceCase]:
    """PAD, PADV2 and STRIDED_SLICE on int16 (TFLM's int16 kernels): odd sizes, 5-D padding,
    PADV2 constants at the int16 limits, negative strides, masks, a shrunk axis."""
    s16 = "int16"
    return [PadCase((1, 3, 5, 3), ((0, 0), (1, 2), (0, 1), (0, 0)), dtype=s16, seed=1),
            PadCase((2, 3, 2, 4, 2), ((1, 0), (1, 2), (0, 1), (3, 0), (1, 1)), dtype=s16,
                    seed=2),
            PadCase((7,), ((3, 5),), value=-32768, dtype=s16, seed=3),
            PadCase((2, 3, 4), ((1, 1), (0, 2), (2, 0)), value=32767, dtype=s16, seed=4),
            PadCase((5, 6), ((2, 0), (0, 3)), value=-1234, dtype=s16, seed=5),
            SliceCase((4, 6, 5), (1, 0, -1), (3, 6, 0), (1, 2, -1), dtype=s16, seed=6),
            SliceCase((1, 8, 8, 3), (0, -1, 0, 1), (1, 0, 8, 2), (1, -1, 1, 1), 1, 1, 8,
                      dtype=s16, seed=7),
            SliceCase((6, 7), (-1, 6), (-7, -8), (-1, -2), dtype=s16, seed=8),
            SliceCase((3, 4, 5, 6), (1, 0, 0, 0), (2, 4, 5, 6), (1, 1, 1, 1), 14, 14, 1,
                      dtype=s16, seed=9),
            SliceCase((3, 5, 7), (0, 1, 2), (3, 4, 7), (1, 1, 1), dtype=s16, seed=10)]
