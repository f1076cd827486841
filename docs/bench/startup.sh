#!/usr/bin/env bash
# Whole-process time of an estimate and of `napkin --version` (issue 8 §1 targets: the
# estimate under 4 ms median and within 1.5x --version), for one or more napkin binaries.
# Not a test: timings depend on the machine and its load; run it on a quiet machine.
#
#   docs/bench/startup.sh [RUNS] LABEL=BINARY [LABEL=BINARY ...]
#   docs/bench/startup.sh 50 with-cuda=build/src/napkin without-cuda=build-nocuda/src/napkin
#
# "with-cuda": a build where CMake found the CUDA Toolkit (the CUDA module is built beside
# the binary, CUDA 13 is installed on the machine). "without-cuda": a build configured with
# -DNAPKIN_ENABLE_CUDA=OFF, which is what the binary is on a machine without CUDA: the
# executable links no CUDA library either way, so the machine's CUDA installation cannot
# change its start. Each binary also runs with NAPKIN_CUDA_MODULE pointing nowhere, to show
# that an estimate never looks for the module.
#
# Uses hyperfine (Debian: apt-get install hyperfine) with -N (no shell in between), else a
# fork/exec loop in Python (~0.3 ms of its own overhead per run). Prints a Markdown table of
# medians (and min, max) in milliseconds.
set -euo pipefail
RUNS=${1:-50}
shift || true
if [ $# -eq 0 ]; then set -- "napkin=build/src/napkin"; fi
ESTIMATE="train --model llama3-70b --tokens 15T --gpus 1024"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

measure() {  # measure OUT.json BINARY ARGS... -> {median, min, max} in seconds
  local out=$1; shift
  if command -v hyperfine >/dev/null 2>&1; then
    hyperfine -N --runs "$RUNS" --warmup 5 --export-json "$TMP/h.json" "$*" >/dev/null 2>&1
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; json.dump({"median": r["median"], "min": r["min"], "max": r["max"]}, open(sys.argv[2], "w"))' "$TMP/h.json" "$out"
  else
    python3 - "$RUNS" "$out" "$@" <<'PY'
import json, os, statistics, subprocess, sys, time
runs, out, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
t = []
for i in range(runs + 5):
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    if i >= 5:
        t.append(time.perf_counter() - t0)
json.dump({"median": statistics.median(t), "min": min(t), "max": max(t)}, open(out, "w"))
PY
  fi
}

ms() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.2f (%.2f-%.2f)" % (1e3*r["median"], 1e3*r["min"], 1e3*r["max"]))' "$1"; }
ratio() { python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["median"]; b=json.load(open(sys.argv[2]))["median"]; print("%.2f" % (a/b))' "$1" "$2"; }

echo "| binary | estimate ms, median (min-max) | --version ms | estimate / --version | NEEDED libraries |"
echo "|---|---|---|---|---|"
for pair in "$@"; do
  label=${pair%%=*}
  bin=${pair#*=}
  [ -x "$bin" ] || { echo "| $label | not built ($bin) | | | |"; continue; }
  measure "$TMP/e.json" "$bin" $ESTIMATE
  measure "$TMP/v.json" "$bin" --version
  needed=$(readelf -d "$bin" 2>/dev/null | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
  echo "| $label | $(ms "$TMP/e.json") | $(ms "$TMP/v.json") | $(ratio "$TMP/e.json" "$TMP/v.json") | $needed|"
  NAPKIN_CUDA_MODULE=/nonexistent/libnapkin_cuda.so measure "$TMP/e.json" "$bin" $ESTIMATE
  echo "| $label, NAPKIN_CUDA_MODULE=/nonexistent | $(ms "$TMP/e.json") | | | |"
done
echo
echo "$RUNS runs each after 5 warm-up runs; $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%dT%H:%MZ)"
