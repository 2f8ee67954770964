#!/bin/sh
# The GPU matrix (benchmarks/gpu_matrix.py): OUT [--part quick|more|extra|all] [--only STEP,...] [--budget S]
# [--dry-run [--as-gpu NAME]] [--plan] [--work DIR]; docs/gpu-matrix.md.
# On the GPU machine, python3 is the one with its torch; elsewhere set PYTHON (e.g. .venv/bin/python).
here=$(cd "$(dirname "$0")" && pwd)
exec "${PYTHON:-python3}" "$here/gpu_matrix.py" "$@"
