#!/usr/bin/env bash
# One-shot GPU check for issue 6: on a machine with an NVIDIA GPU, install gpuplan[bench] when torch
# or gpuplan's dependencies are missing (best effort: the GPU machine may have no registry), then run
# `gpuplan probe --bench -o json` and check the H200 goals. Installs nothing on a machine without a GPU.
# Usage (repository root): bash benchmarks/probe_gpu.sh [--out DIR]   (default: $OUT or .)
set -u
PY=${PYTHON:-python3}
if nvidia-smi -L >/dev/null 2>&1; then
  nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv
  if ! "$PY" -c "import torch, typer, pydantic, pynvml" 2>/dev/null; then
    "$PY" -m pip install -q -e ".[bench]" 2>&1 | tail -3 || true
  fi
else
  echo "nvidia-smi: no NVIDIA GPU here; nothing will be installed"
fi
"$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'gpus', torch.cuda.device_count())" \
  2>/dev/null || echo "torch: not importable"
exec "$PY" benchmarks/probe_gpu.py "$@"
