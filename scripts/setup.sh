#!/usr/bin/env bash
# Sets up everything tinydeploy needs on Debian/Ubuntu; safe to re-run (does only what is missing).
#  - Debian packages: the Arm GNU toolchain + newlib (firmware), QEMU (emulated boards),
#    espeak-ng, flite and festival with three English voices (synthetic keyword data),
#    clang with its sanitizer runtimes (MemorySanitizer over the host firmware).
#    Installed with apt-get, via sudo only when not root.
#  - .venv with Python 3.11 and tinydeploy installed editable with pinned dependencies
#    (constraints.txt), including tensorflow-cpu (quantization), tflite-micro (the oracle) and
#    platformio (real boards' projects; its config reader checks them in the tests).
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm espeak-ng gcc make
              flite festival festvox-kallpc16k festvox-kdlpc16k festvox-us-slt-hts
              clang libclang-rt-14-dev)

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    SUDO="sudo"
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  say "Debian packages present: ${APT_PACKAGES[*]}"
fi

PY=""
for c in python3.11 python3; do
  if command -v "$c" >/dev/null && "$c" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
    PY=$(command -v "$c"); break
  fi
done
if [ -z "$PY" ]; then
  say "Python 3.11 not found; installing python3.11 and python3.11-venv"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3.11 python3.11-venv >/dev/null
  PY=$(command -v python3.11)
fi

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
  say "creating .venv with $PY"
  rm -rf .venv
  "$PY" -m venv .venv
fi

stamp=.venv/.tinydeploy-setup
want=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  say "installing Python packages into .venv (first time: a few minutes, TensorFlow is large)"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -c constraints.txt -e '.[quantize,oracle,dev,onnx,fuzz,boards]'
  # ONNX import: onnx2tf and tf_keras without their dependency pins (see pyproject.toml)
  .venv/bin/python -m pip install -q --no-deps -c constraints.txt onnx2tf tf_keras
  echo "$want" > "$stamp"
else
  say "Python packages up to date"
fi
bash scripts/fetch_public_models.sh
say "ready: $(.venv/bin/tinydeploy --version), $(arm-none-eabi-gcc --version | head -1), $(qemu-system-arm --version | head -1)"
