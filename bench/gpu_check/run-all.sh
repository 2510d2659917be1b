#!/bin/bash
# Run every GPU check program under gpuprof (from the source tree) and print expected vs. found
# verdicts and top fixes. Needs a machine with an NVIDIA GPU and a CUDA build of torch.
# Usage, from the project root: bash bench/gpu_check/run-all.sh [OUT_DIR]
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-gpu-check-out}"; mkdir -p "$out"
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
for p in h2d_pageable:transfer.h2d gpu_compute:compute gpu_starved:input.cpu launch_bound:host.overhead; do
  name=${p%%:*}; want=${p##*:}
  python3 -m gpuprof run --json "$out/$name.json" "$here/$name.py" >"$out/$name.log" 2>&1; rc=$?
  got=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['verdict']['bottleneck'], [a['id'] for a in d['advice']][:3])" "$out/$name.json" 2>/dev/null)
  echo "$name: exit $rc, expected $want, found ${got:-no report}"
done
