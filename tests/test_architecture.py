"""Stages only import downward: the import graph of ``tinydeploy/`` against the layer table of
``docs/architecture.md`` (every ``import``, at module level or inside a function), and no
cycle between the modules of one package. The checker is proven on a made-up package with
each kind of violation. Also: each closed registry covers its whole enum."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

CLONE = Path(__file__).resolve().parent.parent
PACKAGE = CLONE / "tinydeploy"
ARCHITECTURE = CLONE / "docs" / "architecture.md"


@dataclass(frozen=True)
class Import:
    source: str     # importing module, dotted
    target: str     # imported module, dotted
    line: int


def read_layers(doc: Path) -> dict[str, int]:
    """{unit: rank} from the doc's table rows ``| rank | `a` `b` | ... |``; a unit is the
    root package or one of its direct children (package or module)."""
    layers: dict[str, int] = {}
    for line in doc.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\|\s*(\d+)\s*\|([^|]*)\|", line)
        if m:
            for name in re.findall(r"`([\w.]+)`", m.group(2)):
                layers[name] = int(m.group(1))
    if not layers:
        raise AssertionError(f"{doc} has no layer table")
    return layers


def modules(pkg_dir: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py under ``pkg_dir`` (a package's __init__ is
    the package's name)."""
    out = {}
    for p in sorted(pkg_dir.rglob("*.py")):
        parts = p.relative_to(pkg_dir.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def imports(pkg_dir: Path) -> Iterator[Import]:
    """Every import of a module of the package from a module of the package."""
    mods = modules(pkg_dir)
    root = pkg_dir.name
    for name, path in mods.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = name.split(".")[: len(name.split(".")) - node.level + (1 if is_pkg
                                                                                 else 0)]
                    base = ".".join(up + ([node.module] if node.module else []))
                subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in mods]
                targets = subs + ([base] if len(subs) < len(node.names) else [])
            for t in targets:
                if t == root or t.startswith(root + "."):
                    # the deepest module of the package that the name denotes
                    while t not in mods and "." in t:
                        t = t.rsplit(".", 1)[0]
                    if t != name:
                        yield Import(name, t, node.lineno)


def unit(module: str) -> str:
    parts = module.split(".")
    return parts[0] if len(parts) == 1 else parts[1]


def violations(pkg_dir: Path, layers: dict[str, int]) -> list[str]:
    """Every upward or same-rank import between units, every unit missing from the table,
    and every cycle between the modules of one unit."""
    problems: list[str] = []
    edges: dict[str, set[str]] = {}
    mods = modules(pkg_dir)
    for m in mods:
        if unit(m) not in layers:
            problems.append(f"{m}: its unit '{unit(m)}' has no rank in the layer table")
    for imp in imports(pkg_dir):
        a, b = unit(imp.source), unit(imp.target)
        if a == b:
            edges.setdefault(imp.source, set()).add(imp.target)
            continue
        if a not in layers or b not in layers:
            continue
        if layers[b] > layers[a]:
            problems.append(f"{imp.source} (rank {layers[a]}) imports {imp.target} "
                            f"(rank {layers[b]}) at line {imp.line}: upward")
        elif layers[b] == layers[a]:
            problems.append(f"{imp.source} imports {imp.target} at line {imp.line}: both "
                            f"rank {layers[a]}, packages of one rank do not import each other")
    problems += [f"import cycle between modules: {' -> '.join(c)}" for c in cycles(edges)]
    return sorted(set(problems))


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def test_stages_only_import_downward() -> None:
    layers = read_layers(ARCHITECTURE)
    problems = violations(PACKAGE, layers)
    assert not problems, (f"{len(problems)} import(s) break the layer rule of "
                          "docs/architecture.md:\n" + "\n".join(problems))
    assert sum(1 for _ in imports(PACKAGE)) > 100   # the walk saw the real graph


def test_every_ranked_unit_exists() -> None:
    """The table names only packages and modules that are there (it stays in step)."""
    layers = read_layers(ARCHITECTURE)
    units = {unit(m) for m in modules(PACKAGE)}
    assert set(layers) == units, (f"in the table only: {sorted(set(layers) - units)}; "
                                  f"in the package only: {sorted(units - set(layers))}")


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root / "pkg"


FAKE_DOC = """| rank | units |
|---:|---|
| 0 | `pkg` `errors` |
| 1 | `low` |
| 2 | `mid` `side` |
| 3 | `high` |
"""


@pytest.mark.parametrize("files, expected", [
    ({"pkg/low/a.py": "def f():\n    from pkg.high import h\n"}, "pkg.low.a (rank 1) imports "
     "pkg.high.h (rank 3) at line 2: upward"),
    ({"pkg/mid/__init__.py": "from pkg.side import s\n"}, "both rank 2"),
    ({"pkg/mid/a.py": "from pkg.mid import b\n", "pkg/mid/b.py": "import pkg.mid.a\n"},
     "import cycle between modules: pkg.mid.a -> pkg.mid.b"),
    ({"pkg/extra.py": "import os\n"}, "unit 'extra' has no rank"),
    ({"pkg/low/b.py": "from ..high import h\n"}, "pkg.low.b (rank 1) imports pkg.high"),
])
def test_the_checker_catches_each_kind_of_violation(tmp_path: Path, files: dict[str, str],
                                                    expected: str) -> None:
    base = {"pkg/__init__.py": "", "pkg/errors.py": "", "pkg/low/__init__.py": "",
            "pkg/mid/__init__.py": "", "pkg/side/__init__.py": "from pkg.low import x\n",
            "pkg/side/s.py": "", "pkg/high/__init__.py": "from pkg.mid import y\n"
                                                        "import pkg.errors\n",
            "pkg/high/h.py": ""}
    pkg = _write(tmp_path, {**base, **files})
    (tmp_path / "doc.md").write_text(FAKE_DOC, encoding="utf-8")
    layers = read_layers(tmp_path / "doc.md")
    problems = violations(pkg, layers)
    assert any(expected in p for p in problems), problems


def test_the_fake_base_package_is_clean(tmp_path: Path) -> None:
    base = {"pkg/__init__.py": "", "pkg/errors.py": "", "pkg/low/__init__.py": "",
            "pkg/high/__init__.py": "from pkg.low import x\nimport pkg.errors\n"}
    (tmp_path / "doc.md").write_text(FAKE_DOC, encoding="utf-8")
    assert violations(_write(tmp_path, base), read_layers(tmp_path / "doc.md")) == []


def test_each_registry_covers_its_enum() -> None:
    """Closed sets defined once, and each registry over one has an entry for every member."""
    from tinydeploy.apps import APP_PARTS, REQUIRED_HEADERS, App
    from tinydeploy.boards import CORES, FAMILIES, RUNNERS, Family, RunnerKind
    from tinydeploy.flash.hardware import HARDWARE_RUNNERS
    from tinydeploy.flash.registry import RUNNERS as RUNNER_REGISTRY
    from tinydeploy.pipeline import APP_SOURCES
    from tinydeploy.resources import firmware_dir
    from tinydeploy.toolchain import CORE_FLAGS, Core

    assert set(RUNNER_REGISTRY) == set(RunnerKind) == RUNNERS
    assert set(HARDWARE_RUNNERS) == set(RunnerKind) - {RunnerKind.QEMU, RunnerKind.HOST}
    assert {r.name for r in HARDWARE_RUNNERS.values()} == {k.value for k in HARDWARE_RUNNERS}
    assert set(APP_PARTS) == set(App)
    assert set(REQUIRED_HEADERS) <= set(APP_SOURCES)
    assert set(CORE_FLAGS) == set(Core) and set(CORES) == {c.value for c in Core}
    assert FAMILIES == set(Family)
    platform = firmware_dir() / "platform"
    assert {f for f in Family} == {p.name for p in platform.iterdir() if p.is_dir()} - {
        "cortexm"}, "one firmware/platform/<family>/ folder per Family"
    for app, parts in APP_PARTS.items():
        for part in parts:
            assert (firmware_dir() / part).is_dir(), f"app {app}: firmware/{part} is missing"
