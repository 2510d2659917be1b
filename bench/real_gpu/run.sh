#!/bin/bash
# Everything gpuprof checks on a real NVIDIA GPU, in one call of about five minutes (docs/validation.md):
#   1. the cost table the simulated GPU is calibrated to (cost_table.py: CUDA events and timers)
#   2. gpuprof doctor, and gpuprof doctor --verify (the scenarios marked real)
#   3. gpuprof run on every GPU scenario program, the shared GPU check programs and three programs
#      shaped as users write them (programs/), with plain runs of two of them for gpuprof's cost
#   4. gpuprof try --fix on the top fix of two of those programs: measured against estimated
# Run from anywhere in a checkout: bench/real_gpu/run.sh [OUT_DIR]. ONLY="name ..." runs only the named
# steps (costs, doctor, doctor-verify, a program's name, plain_NAME, try_NAME): a second call for what
# the first left open; COST_ARGS passes arguments to cost_table.py (--only PART ...). Nothing is installed: gpuprof runs
# from the checkout (PYTHONPATH) in the python that has torch. Results: OUT_DIR/summary.txt,
# OUT_DIR/costs.json, OUT_DIR/reports.tgz (reports, logs, the doctor's JSON) and OUT_DIR/runs.tgz (the
# run folders, for `gpuprof report` again elsewhere).
set -u
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
out="${OUT:-${1:-real-gpu-out}}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
work="$(mktemp -d /tmp/gpuprof-real-gpu.XXXXXX)"
mkdir -p "$work/reports" "$work/runs"
py="$(command -v python3)"
export PATH="$(dirname "$py"):$PATH" PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
summary="$out/summary.txt"
: >"$summary"
here="bench/real_gpu"

say() { echo "$*" | tee -a "$summary"; }
pack() {
  tar -C "$work" -czf "$out/reports.tgz.tmp" reports && mv "$out/reports.tgz.tmp" "$out/reports.tgz"
}
wanted() { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]; }
# step NAME SECONDS COMMAND...: run it with a time limit, its output to reports/NAME.log
step() {
  local name=$1 limit=$2; shift 2
  wanted "$name" || return 3
  local t0=$SECONDS
  timeout -k 5 "$limit" "$@" >"$work/reports/$name.log" 2>&1
  local rc=$?
  say "-- $name: exit $rc, $((SECONDS - t0)) s"
  pack
  return $rc
}
# profile NAME SECONDS PROGRAM ARGS...: gpuprof run with the report kept as reports/NAME.json
profile() {
  local name=$1 limit=$2; shift 2
  wanted "$name" || return 0
  step "$name" "$limit" "$py" -m gpuprof run --no-live --json "$work/reports/$name.json" \
    --out "$work/runs/$name" "$@"
  say "   $("$py" "$here/summarise.py" "$work/reports/$name.json")"
}
# the report's first fix that try can apply (one with a `change`; not compile, whose compiling in every run
# outlasts this call)
top_fix() { "$py" -c "import json,sys; a=json.load(open(sys.argv[1])).get('advice') or []; t=[(i,x['id']) for i,x in enumerate(a,1) if x.get('change') and x['id'] != 'compile']; print(t[0][1] if t else '')" "$1" 2>/dev/null; }
# plain NAME PROFILED SECONDS PROGRAM ARGS...: the program without gpuprof, its last line beside the profiled run's
plain() {
  local name=$1 profiled=$2 limit=$3; shift 3
  wanted "$name" || return 0
  step "$name" "$limit" "$py" "$@"
  say "   $(tail -n 1 "$work/reports/$name.log") | profiled: $(grep '^done' "$work/reports/$profiled.log" 2>/dev/null | tail -n 1)"
}
# try_fix NAME FIX|top SECONDS PROGRAM ARGS...: gpuprof try --fix, two rounds; "top": the first fix of NAME's
# report that try can apply
try_fix() {
  local name=$1 fix=$2 limit=$3; shift 3
  wanted "try_$name" || return 0
  [ "$fix" = top ] && fix="$(top_fix "$work/reports/$name.json")"
  if [ -z "$fix" ]; then say "-- try_$name: no fix to try"; return 0; fi
  say "   $name: fix $fix"
  step "try_$name" "$limit" "$py" -m gpuprof try --fix "$fix" --rounds 2 --max-rounds 2 --steps 20 --warmup-steps 5 \
    --budget $((limit - 30)) --json "$work/reports/try_$name.json" --out "$work/runs/try_$name" "$@"
  tail -n 14 "$work/reports/try_$name.log" >>"$summary"
}

say "== machine $(date -u +%Y-%m-%dT%H:%MZ)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | tee -a "$summary"
"$py" -c "import sys, torch, typer, rich, psutil, pynvml, h5py; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'typer', typer.__version__)" 2>&1 | tee -a "$summary"
grep -m1 'model name' /proc/cpuinfo | tee -a "$summary"; nproc | tee -a "$summary"

say "== 1. cost table"
step costs 150 "$py" "$here/cost_table.py" --json "$out/costs.json" ${COST_ARGS:-}

say "== 2. doctor"
step doctor 60 "$py" -m gpuprof doctor && tail -n 40 "$work/reports/doctor.log" >>"$summary"
step doctor-verify 240 "$py" -m gpuprof doctor --verify --json "$work/reports/doctor-verify.json" --keep "$work/doctor-keep" \
  && tail -n 30 "$work/reports/doctor-verify.log" >>"$summary"

say "== 3. gpuprof run"
P=gpuprof/testing/scenarios/programs
C=$here/gpu_check
U=$here/programs
profile lm_fp32 90 "$U/transformer_lm.py" --precision fp32
profile lm_bf16 90 "$U/transformer_lm.py" --precision bf16
profile conv_workers_pinned 90 "$U/conv_workers_pinned.py"
profile tiny_mlp 90 "$U/tiny_mlp.py"
profile paused_compute 60 "$P/paused_compute.py"
profile two_ranks_one_gpu 90 -- "$py" -m torch.distributed.run --nproc-per-node 1 "$P/two_ranks.py"
profile check_h2d_pageable 60 "$C/h2d_pageable.py"
profile check_gpu_compute 60 "$C/gpu_compute.py"
profile check_gpu_starved 60 "$C/gpu_starved.py"
profile check_launch_bound 90 "$C/launch_bound.py"
say "   plain (no gpuprof), for gpuprof's cost:"
plain plain_tiny_mlp tiny_mlp 60 "$U/tiny_mlp.py"
plain plain_lm_fp32 lm_fp32 60 "$U/transformer_lm.py" --precision fp32
plain plain_conv_workers_pinned conv_workers_pinned 60 "$U/conv_workers_pinned.py"

say "== 4. gpuprof try --fix"
try_fix lm_fp32 top 150 "$U/transformer_lm.py" --precision fp32 --steps 200
try_fix conv_workers_pinned top 150 "$U/conv_workers_pinned.py" --steps 600
try_fix lm_fp32_tf32 tf32 120 "$U/transformer_lm.py" --precision fp32 --steps 200
try_fix check_gpu_starved num-workers 120 "$C/gpu_starved.py"

say "== done"
pack
# the run folders: for `gpuprof report` again elsewhere (left out when over 15 MB)
tar -C "$work" -czf "$out/runs.tgz" runs $( [ -d "$work/doctor-keep" ] && echo doctor-keep ) 2>/dev/null
[ "$(stat -c %s "$out/runs.tgz" 2>/dev/null || echo 0)" -gt 15000000 ] && \
  { tar -C "$work" -czf "$out/runs.tgz" --exclude='*.events*' runs; say "runs.tgz without event files"; }
ls -la "$out" | tee -a "$summary"
