#!/usr/bin/env bash
# Proves the torch floor declared in pyproject.toml: installs that torch and its torchvision from PyPI into a
# throw-away virtual environment, takes a clean copy of the committed tree (git archive HEAD: nothing
# uncommitted, nothing ignored), installs the suite there and runs the fast tests (-m "not slow").
#
#     benchmarks/compat.sh                      # the floor: torch 2.1.2, torchvision 0.16.2, numpy < 2
#     TORCH=2.5.1 TORCHVISION=0.20.1 NUMPY='numpy' benchmarks/compat.sh
#
# Not part of the normal test run: PyPI's Linux torch wheels are CUDA builds (torch 2.1.2: a 670 MB wheel
# plus about 2 GB of nvidia-* wheels), so this downloads a few GB and takes minutes. The tests run on the
# CPU either way. Everything is removed at the end; the exit status is pytest's.
set -euo pipefail

TORCH="${TORCH:-2.1.2}"
TORCHVISION="${TORCHVISION:-0.16.2}"
# torch < 2.3 was built against numpy 1.x and cannot import numpy 2's C API.
NUMPY="${NUMPY:-numpy<2}"
PYTHON="${PYTHON:-python3}"

repo="$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
work="$(mktemp -d "${TMPDIR:-/tmp}/suite-compat.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "compat: torch==$TORCH torchvision==$TORCHVISION $NUMPY, commit $(git -C "$repo" rev-parse --short HEAD)"
mkdir "$work/src"
git -C "$repo" archive HEAD | tar -x -C "$work/src"

"$PYTHON" -m venv "$work/venv"
pip="$work/venv/bin/pip"
"$pip" install -q --upgrade pip
"$pip" install -q "torch==$TORCH" "torchvision==$TORCHVISION" "$NUMPY"
# The suite and its test tools; pip keeps the torch installed above (it satisfies the floor).
"$pip" install -q -c <("$pip" freeze | grep -i -E '^(torch|torchvision|numpy)==') "$work/src[dev]"
"$work/venv/bin/python" -c "import torch, torchvision; print('compat: running on torch', torch.__version__, 'torchvision', torchvision.__version__)"

cd "$work/src"
SKYPILOT_DISABLE_LOCAL_API_SERVER=1 SKYPILOT_DISABLE_USAGE_COLLECTION=1 AWS_EC2_METADATA_DISABLED=true \
    "$work/venv/bin/python" -m pytest -q -p no:cacheprovider -m "not slow" "$@"
