#!/usr/bin/env bash
# One-shot GPU check of `gpuplan probe` (issue 6) on a machine with an NVIDIA GPU: what nvidia-smi says,
# `gpuplan probe` (JSON and table), the NVML answers the probe got (`python -m gpuplan.probe.record`),
# the /proc and /sys files the host probe read, and `gpuplan probe --bench` with the H200 goals
# (benchmarks/probe_gpu.py). Every output is a file under --out (default: $OUT or ./probe-out).
#
# gpuplan runs from this checkout (src on PYTHONPATH). Its dependencies come, in this order, from
# wheels in .whl/ (installed with --target into a scratch folder: for a machine with no registry),
# from what python3 already has, or from `pip install -e ".[bench]"` (best effort, no retries).
# Usage (repository root): bash benchmarks/probe_gpu.sh [--out DIR]
set -u
OUTDIR=${OUT:-./probe-out}
if [ "${1:-}" = "--out" ] && [ -n "${2:-}" ]; then OUTDIR=$2; fi
mkdir -p "$OUTDIR"
PY=${PYTHON:-python3}
SITE=${SITE:-/tmp/gpuplan-site}
WHEELS=${WHEELS:-.whl}
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }

step nvidia-smi
if ! nvidia-smi -L; then
  echo "nvidia-smi: no NVIDIA GPU here; nothing will be installed"
fi
nvidia-smi -q 2>&1 | head -40
nvidia-smi -q -x > "$OUTDIR/nvidia-smi-q.xml" 2>&1 || echo "nvidia-smi -q -x failed"
nvidia-smi --query-gpu=index,name,memory.total,driver_version,pcie.link.gen.current,pcie.link.width.current \
  --format=csv 2>&1
nvidia-smi nvlink -s 2>&1 | head -30
nvidia-smi topo -m 2>&1 | head -20

step python and dependencies
if ls "$WHEELS"/*.whl >/dev/null 2>&1; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" "$WHEELS"/*.whl \
    && export PYTHONPATH="$SITE"
fi
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
if ! "$PY" -c "import typer, pydantic, rich, yaml" 2>/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  "$PY" -m pip install -q --retries 0 --timeout 5 -e ".[bench]" 2>&1 | tail -3 || true
fi
"$PY" -c "import sys; print('python', sys.version.split()[0], sys.executable)"
"$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'gpus', torch.cuda.device_count())" \
  2>/dev/null || echo "torch: not importable"
"$PY" -c "import pynvml, importlib.metadata as m; print('nvidia-ml-py', m.version('nvidia-ml-py'))" 2>/dev/null \
  || echo "pynvml: not importable"

step gpuplan probe -o json
"$PY" -m gpuplan --debug probe -o json > "$OUTDIR/probe.json"; echo "rc=$?"
step gpuplan probe
COLUMNS=100 "$PY" -m gpuplan --debug probe > "$OUTDIR/probe_table.txt"; echo "rc=$?"
cat "$OUTDIR/probe_table.txt"
step NVML record
"$PY" -m gpuplan.probe.record > "$OUTDIR/nvml-record.json"; echo "rc=$?"
step "gpuplan probe --bench -o json (benchmarks/probe_gpu.py) and the host tree"
"$PY" benchmarks/probe_gpu.py --out "$OUTDIR" --host-tree; echo "rc=$?"
step gpuplan probe --bench
COLUMNS=100 "$PY" -m gpuplan --debug probe --bench > "$OUTDIR/probe_bench_table.txt"; echo "rc=$?"
cat "$OUTDIR/probe_bench_table.txt"
step done
