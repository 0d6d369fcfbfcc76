"""The toolchain facts: which cores exist, the GCC flags for each, and the compile and link
rules every firmware build follows.

This is the one place these facts are written. The generated ``Makefile`` (rendered from
``templates/Makefile.j2``), the build runner for tests (``build/toolchain.py``), the boards'
core check, the front end's QEMU harness, the kernel benchmarks and the golden tests all take
their flags from here, so a flag added here reaches every build at once.

Invariants: every tuple is in the order it appears on a command line, so the same inputs give
the same command lines; the host "core" has no flags of its own (the system compiler's
defaults); nothing here depends on a board file, so ``boards.py`` can validate against it.
"""

from __future__ import annotations

from enum import StrEnum


class Core(StrEnum):
    """The closed set of cores a board file may name (``core = "..."``)."""

    CORTEX_M0 = "cortex-m0"
    CORTEX_M0PLUS = "cortex-m0plus"
    CORTEX_M3 = "cortex-m3"
    CORTEX_M4 = "cortex-m4"
    CORTEX_M4F = "cortex-m4f"
    CORTEX_M7 = "cortex-m7"
    CORTEX_M33 = "cortex-m33"
    CORTEX_M55 = "cortex-m55"
    HOST = "host"


# -mcpu/-mfpu/-mfloat-abi per core. The M55 needs the hard-float ABI: with soft float GCC
# silently drops MVE. The M0 has no divider: libgcc (ARM_LDLIBS) supplies division.
CORE_FLAGS: dict[Core, tuple[str, ...]] = {
    Core.CORTEX_M0: ("-mcpu=cortex-m0", "-mthumb", "-mfloat-abi=soft"),
    Core.CORTEX_M0PLUS: ("-mcpu=cortex-m0plus", "-mthumb", "-mfloat-abi=soft"),
    Core.CORTEX_M3: ("-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"),
    Core.CORTEX_M4: ("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=soft"),
    Core.CORTEX_M4F: ("-mcpu=cortex-m4", "-mthumb", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"),
    Core.CORTEX_M7: ("-mcpu=cortex-m7", "-mthumb", "-mfpu=fpv5-d16", "-mfloat-abi=hard"),
    Core.CORTEX_M33: ("-mcpu=cortex-m33", "-mthumb", "-mfpu=fpv5-sp-d16", "-mfloat-abi=hard"),
    Core.CORTEX_M55: ("-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"),
    Core.HOST: (),
}

ARM_PREFIX = "arm-none-eabi-"
DEFAULT_OPT = "-O2"
# Debian packages that provide each tool, named in every "not found" error.
DEBIAN_PACKAGES = {
    "arm": "gcc-arm-none-eabi libnewlib-arm-none-eabi",
    "host": "gcc",
    "binutils": "binutils",
    "make": "make",
    "qemu": "qemu-system-arm",
}

# The compile rule, after the core flags and the optimisation level. C99, warnings that catch
# real bugs as errors, one section per function and object (so --gc-sections drops unused
# kernels), no tentative definitions, no FMA contraction (float results as written).
COMMON_CFLAGS: tuple[str, ...] = (
    "-std=c99", "-g", "-Wall", "-Wextra", "-Wno-unused-parameter",
    "-Werror=implicit-function-declaration", "-Werror=incompatible-pointer-types",
    "-ffunction-sections", "-fdata-sections", "-fno-common", "-ffp-contract=off",
)
# Per-object stack frames (.su) and call graph (.ci): the build's worst-case stack measure.
STACK_ANALYSIS_CFLAGS: tuple[str, ...] = ("-fstack-usage", "-fcallgraph-info=su")
SANITIZE_CFLAGS: tuple[str, ...] = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                                    "-fno-omit-frame-pointer")
SANITIZE_LDFLAGS: tuple[str, ...] = ("-fsanitize=address,undefined",)

# The link rule. Bare metal: our own startup code, unused sections dropped, input sections
# placed by alignment (the 16-byte aligned constants together: 124 B less padding on a DS-CNN
# bench build), newlib-nano with no system calls; the host: the system's start files and libm.
ARM_LDFLAGS: tuple[str, ...] = ("-nostartfiles", "-Wl,--gc-sections",
                                "-Wl,--sort-section=alignment", "--specs=nano.specs",
                                "--specs=nosys.specs")
ARM_LDLIBS: tuple[str, ...] = ("-lc", "-lm", "-lgcc")
HOST_LDFLAGS: tuple[str, ...] = ("-Wl,--gc-sections",)
HOST_LDLIBS: tuple[str, ...] = ("-lm",)


def core_flags(core: Core | str) -> tuple[str, ...]:
    """The -mcpu/-mfpu/-mfloat-abi flags of ``core`` (KeyError for an unknown one)."""
    return CORE_FLAGS[Core(core)]


def is_host(core: Core | str) -> bool:
    return Core(core) is Core.HOST


def file_prefix_map(root: str) -> str:
    """Debug info and ``__FILE__`` relative to the project folder: the ELF does not depend on
    where the folder is (reproducible builds). ``root`` is a path or ``$(CURDIR)``."""
    return f"-ffile-prefix-map={root}=."


def cflags(core: Core | str, opt: str = DEFAULT_OPT, *, stack_analysis: bool = True,
           sanitize: bool = False, extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The whole compile rule for one core: core flags, optimisation, `COMMON_CFLAGS`, the
    stack analysis flags (generated projects), sanitizers (host only), then ``extra``."""
    if sanitize and not is_host(core):
        raise ValueError(f"sanitizers run on the host, not on {core}")
    return (*core_flags(core), opt, *COMMON_CFLAGS,
            *(STACK_ANALYSIS_CFLAGS if stack_analysis else ()),
            *(SANITIZE_CFLAGS if sanitize else ()), *extra)


def ldflags(core: Core | str, linker_script: str | None = None, map_file: str | None = None,
            *, sanitize: bool = False) -> tuple[str, ...]:
    """The link rule's flags before the objects: core flags, the linker script (bare metal;
    required there), the map file, then the rule's fixed flags."""
    if is_host(core):
        return (*core_flags(core), *HOST_LDFLAGS, *(SANITIZE_LDFLAGS if sanitize else ()))
    if linker_script is None:
        raise ValueError(f"a bare-metal link for {core} needs a linker script")
    return (*core_flags(core), "-T", linker_script, *ARM_LDFLAGS,
            *((f"-Wl,-Map={map_file}",) if map_file else ()))


def ldlibs(core: Core | str) -> tuple[str, ...]:
    """The libraries after the objects."""
    return HOST_LDLIBS if is_host(core) else ARM_LDLIBS
