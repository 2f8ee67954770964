#!/bin/sh
# The GPU matrix (benchmarks/gpu_matrix.py): OUT [--dry-run] [--part 1|2|3] [--budget S] [--work DIR].
# On the GPU machine, python3 is the one with its torch; elsewhere set PYTHON (e.g. .venv/bin/python).
here=$(cd "$(dirname "$0")" && pwd)
exec "${PYTHON:-python3}" "$here/gpu_matrix.py" "$@"
