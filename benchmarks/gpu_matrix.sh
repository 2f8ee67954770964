#!/bin/sh
# The GPU matrix (benchmarks/gpu_matrix.py): OUT [--part quick|more|extra|tune|best|best-more|all] [--only STEP,...] [--budget S]
# [--dry-run [--as-gpu NAME]] [--plan] [--work DIR]; docs/gpu-matrix.md.
# On the GPU machine, python3 is the one with its torch; elsewhere set PYTHON (e.g. .venv/bin/python).
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python3}
# An interpreter that is not there is bad input, one line and exit 2 as the docs say (exec alone: 127).
case $python in
*/*) [ -f "$python" ] && [ -x "$python" ] ;;
*) command -v "$python" >/dev/null 2>&1 ;;
esac || {
    printf 'gpu matrix: PYTHON=%s cannot run the matrix: no such interpreter (set PYTHON to one, e.g. .venv/bin/python)\n' "$python" >&2
    exit 2
}
exec "$python" "$here/gpu_matrix.py" "$@"
