"""Pure-Python parts of codegen and build: C name sanitising, board defines, stack analysis."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tinydeploy.boards import get_board
from tinydeploy.build.stack import worst_stack
from tinydeploy.codegen.cnames import c_comment, c_identifier, c_string
from tinydeploy.codegen.platform import board_defines


def test_names_from_models_cannot_break_c() -> None:
    hostile = 'a"b\\c*/d/*e\n?\x00é'
    s = c_string(hostile)
    assert '"' not in s.replace('\\"', "") and "\n" not in s and "?" not in s
    assert all(" " <= ch <= "~" for ch in s)
    c = c_comment(hostile)
    assert "*/" not in c and "/*" not in c and "\n" not in c
    assert c_identifier("3 conv/weights:0") == "t_3_conv_weights_0"
    assert c_identifier("") == "t"


def test_board_defines() -> None:
    d = dict(x.split("=", 1) for x in board_defines(get_board("nrf52840")))
    assert d["TD_UART_BASE"] == "0x40002000u" and d["TD_UART_TX_PIN"] == "6"
    assert d["TD_FAMILY_NRF5"] == "1" and d["TD_CYCLE_COUNTER_DWT"] == "1"
    assert "TD_QEMU" not in d
    d = dict(x.split("=", 1) for x in board_defines(get_board("nucleo-f401re")))
    assert d["TD_UART_TX_PIN"] == "2" and d["TD_UART_RX_PIN"] == "3"  # PA2, PA3
    d = dict(x.split("=", 1) for x in board_defines(get_board("microbit-v1")))
    assert d["TD_QEMU"] == "1" and d["TD_RAM_SIZE"] == "16384u"
    assert d["TD_CYCLE_COUNTER_SYSTICK"] == "1"     # QEMU models SysTick on the M0
    # the chip's build: no emulator code, TIMER0 (the nRF51 has no SysTick), its IRQ count
    d = dict(x.split("=", 1) for x in board_defines(get_board("microbit-v1"), chip=True))
    assert "TD_QEMU" not in d and d["TD_CYCLE_COUNTER_TIMER0"] == "1"
    assert d["TD_MCU_NRF51822"] == "1" and d["TD_NUM_IRQS"] == "32"
    d = dict(x.split("=", 1) for x in board_defines(get_board("netduinoplus2"), chip=True))
    assert "TD_QEMU" not in d and d["TD_NUM_IRQS"] == "82"
    # CMSDK boards only run on QEMU here: their one build keeps it
    d = dict(x.split("=", 1) for x in board_defines(get_board("mps2-an386"), chip=True))
    assert d["TD_QEMU"] == "1"


CI = """graph: {{ title: "x.c"
node: {{ title: "main" label: "main\\nx.c:1:5\\n{main} bytes (static)" }}
node: {{ title: "a" label: "a\\nx.c:9:6\\n{a} bytes (static)" }}
node: {{ title: "x.c:b" label: "b\\nx.c:19:13\\n{b} bytes (static)" }}
node: {{ title: "memcpy" label: "memcpy\\n<built-in>" shape : ellipse }}
node: {{ title: "SysTick_Handler" label: "SysTick_Handler\\nx.c:30:6\\n8 bytes (static)" }}
edge: {{ sourcename: "main" targetname: "a" }}
edge: {{ sourcename: "main" targetname: "x.c:b" }}
edge: {{ sourcename: "a" targetname: "memcpy" }}
edge: {{ sourcename: "x.c:b" targetname: "x.c:b" }}
}}
"""


def test_worst_stack_path(tmp_path: Path) -> None:
    f = tmp_path / "x.ci"
    f.write_text(CI.format(main=16, a=100, b=40))
    r = worst_stack([f], "main", ["SysTick_Handler"], fpu=False)
    # main(16) > a(100) > memcpy(unknown: 64) = 180, + ISR 8 + exception frame 32
    assert r.path == ("main", "a", "memcpy")
    assert r.bytes == 16 + 100 + 64 + 8 + 32
    assert r.unknown == ("memcpy",) and r.unbounded == ("b",)
    f.write_text(CI.format(main=16, a=8, b=400))
    r = worst_stack([f], "main", [], fpu=True)
    assert r.path == ("main", "b") and r.bytes == 416


def test_kernel_switches_follow_the_calls() -> None:
    """The pointwise product's build switches (td_gemm_s8_dsp.h) come from the model's calls:
    the DS-CNN on the M4 (every pointwise call fast and whole, none under six pixels) leaves
    out both the five-row loop and the general C product; a clamped pointwise layer keeps
    the general product; a streamed build keeps both."""
    from tinydeploy.boards import get_board
    from tinydeploy.codegen.project import _kernel_defines
    from tinydeploy.kernels.registry import select_kernels
    from tinydeploy.model import ir
    from tinydeploy.model.loader import load_tflite
    from tinydeploy.resources import models_dir
    from tinydeploy.testing.builder import ModelBuilder

    board = get_board("mps2-an386")
    g = load_tflite(models_dir() / "kws" / "dscnn_int8.tflite")
    sel = select_kernels(g, board)
    assert _kernel_defines(sel, None) == ["TD_PW_SHORT_GROUPS=0", "TD_PW_GENERAL=0"]
    assert _kernel_defines(sel, object()) == []
    b = ModelBuilder("clamped pointwise")
    x = b.tensor("x", (1, 4, 4, 8), scale=0.05, zero_point=-3)
    w = b.tensor("w", (8, 1, 1, 8), scale=[0.01] * 8, axis=0,
                 data=np.arange(64, dtype=np.int8).reshape(8, 1, 1, 8) - 32)
    bias = b.tensor("b", (8,), "int32", scale=[0.0005] * 8, data=np.arange(8, dtype=np.int32))
    y = b.tensor("y", (1, 4, 4, 8), scale=0.03, zero_point=-128)
    b.op("CONV_2D", [x, w, bias], [y], ir.Conv2DOptions(ir.Padding.VALID, 1, 1,
                                                        ir.Activation.RELU6))
    g2 = load_tflite(b.build(inputs=[x], outputs=[y]))
    sel2 = select_kernels(g2, board)
    assert sel2.choices[0].variant.symbol == "td_conv2d_1x1_s8_dsp"
    assert "TD_PW_GENERAL=0" not in _kernel_defines(sel2, None)
