"""Worst-case stack depth from GCC's `-fcallgraph-info=su` output (one `.ci` file per object).

Each `.ci` file is a VCG graph: nodes are functions with their own frame size
("N bytes (static)"), edges are calls. The worst case is the deepest path from the entry
point, plus the deepest interrupt/exception handler path (an interrupt can arrive at the
deepest point), plus the hardware exception frame. The entry point is not an interrupt
handler even when its name says so (``Reset_Handler``): counting it twice doubled the bound.

A call through a function pointer (GCC's ``__indirect_call`` node: the link's dispatch to
the application's frame handler, the platform's fault hook) is bounded by the deepest of the
functions that could be its target: those that no function calls directly yet are linked
into the firmware (their address is taken), given as ``linked``. Without ``linked`` such a
call counts as an unknown function. All pointer calls share the one node, so a pointer call
made inside a function that is itself reached through a pointer meets the node on its own
path and is cut there (reported in ``unbounded``, counted 0): the firmware's kernels make no
pointer calls for that reason, and the link's dispatch (frame -> application handler) is
bounded through the first expansion, which reaches every candidate. Recursion cannot be
bounded statically; it is reported, not guessed away silently.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_NODE = re.compile(r'node:\s*\{\s*title:\s*"([^"]*)"\s*label:\s*"([^"]*)"')
_EDGE = re.compile(r'edge:\s*\{\s*sourcename:\s*"([^"]*)"\s*targetname:\s*"([^"]*)"')
_FRAME = re.compile(r"(\d+) bytes \((static|dynamic|dynamic,bounded)\)")

# Library functions without call-graph info (newlib): a conservative frame each.
UNKNOWN_FRAME_BYTES = 64
# Cortex-M exception entry pushes 8 words, 26 with the FPU's lazy state.
EXCEPTION_FRAME_BYTES = {False: 32, True: 104}


@dataclass(frozen=True)
class StackReport:
    bytes: int                    # worst case, including interrupt and exception frame
    path: tuple[str, ...]         # the deepest call chain from the entry point
    unbounded: tuple[str, ...]    # functions with dynamic frames or in recursion cycles
    unknown: tuple[str, ...]      # called functions without call-graph info (libraries)


def _short(title: str) -> str:
    return title.rsplit(":", 1)[-1]


def parse_callgraph(files: Iterable[Path]) -> tuple[dict[str, int], dict[str, set[str]],
                                                   set[str]]:
    frames: dict[str, int] = {}
    calls: dict[str, set[str]] = {}
    dynamic: set[str] = set()
    for f in sorted(files):
        text = f.read_text(errors="replace")
        for title, label in _NODE.findall(text):
            name = _short(title)
            m = _FRAME.search(label)
            if m:
                frames[name] = max(frames.get(name, 0), int(m.group(1)))
                if m.group(2) == "dynamic":
                    dynamic.add(name)
        for src, dst in _EDGE.findall(text):
            calls.setdefault(_short(src), set()).add(_short(dst))
    return frames, calls, dynamic


INDIRECT_CALL = "__indirect_call"


def indirect_targets(frames: dict[str, int], calls: dict[str, set[str]], linked: set[str],
                     excluded: Iterable[str]) -> set[str]:
    """Functions that may be reached through a pointer: linked, never called directly, and
    not the entry or an interrupt handler. Local symbols of GCC's clones (``f.constprop.0``)
    match their call-graph names (``f.constprop``)."""
    called = {callee for targets in calls.values() for callee in targets}
    present = set(linked) | {re.sub(r"\.\d+$", "", n) for n in linked}
    skip = set(excluded)
    return {f for f in frames
            if f not in called and f not in skip and f in present}


def worst_stack(files: Iterable[Path], entry: str, handlers: Iterable[str] = (),
                fpu: bool = False, linked: set[str] | None = None) -> StackReport:
    frames, calls, dynamic = parse_callgraph(files)
    handlers = sorted(set(handlers) - {entry})
    if linked is not None:
        targets = indirect_targets(frames, calls, linked, [entry, *handlers])
        frames[INDIRECT_CALL] = 0
        calls[INDIRECT_CALL] = targets
    unknown: set[str] = set()
    unbounded: set[str] = set(dynamic)
    memo: dict[str, tuple[int, tuple[str, ...]]] = {}

    def deepest(fn: str, stack: tuple[str, ...]) -> tuple[int, tuple[str, ...]]:
        if fn in stack:
            unbounded.add(fn)
            return 0, ()
        if fn in memo:
            return memo[fn]
        own = frames.get(fn)
        if own is None:
            unknown.add(fn)
            own = UNKNOWN_FRAME_BYTES
        best: tuple[int, tuple[str, ...]] = (0, ())
        for callee in sorted(calls.get(fn, ())):
            d = deepest(callee, stack + (fn,))
            if d[0] > best[0]:
                best = d
        result = (own + best[0], (fn,) + best[1])
        memo[fn] = result
        return result

    main_depth, path = deepest(entry, ())
    isr = max((deepest(h, ())[0] for h in handlers if h in frames), default=0)
    extra = EXCEPTION_FRAME_BYTES[fpu] if isr or handlers else 0
    return StackReport(main_depth + isr + extra, path, tuple(sorted(unbounded)),
                       tuple(sorted(unknown - {entry})))


def handler_names(files: Iterable[Path]) -> list[str]:
    """Exception and interrupt handlers defined in the build (by the CMSIS naming rule, and
    the Cortex-M vector table's ``td_irq_<n>`` that drivers define)."""
    frames, _, _ = parse_callgraph(files)
    return sorted(n for n in frames if n.endswith("_Handler") or n.endswith("_IRQHandler")
                  or (n.startswith("td_irq_") and n[len("td_irq_"):].isdigit()))
