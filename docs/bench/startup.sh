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
# medians (and min, max) in milliseconds. The commands are interleaved (see run_all).
set -euo pipefail
RUNS=${1:-50}
shift || true
if [ $# -eq 0 ]; then set -- "napkin=build/src/napkin"; fi
ESTIMATE="train --model llama3-70b --tokens 15T --gpus 1024"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# measure OUT.json ARGS... per binary, interleaved: ROUNDS rounds, each timing RUNS/ROUNDS runs of
# every command in turn, so drift in the machine's load falls on all commands alike. Medians over
# all runs of a command; {median, min, max} in seconds.
ROUNDS=10
declare -a LABELS CMDS
add() { LABELS+=("$1"); shift; CMDS+=("$*"); }
run_all() {
  local per=$(( (RUNS + ROUNDS - 1) / ROUNDS ))
  for ((r = 0; r < ROUNDS; r++)); do
    for i in "${!CMDS[@]}"; do
      if command -v hyperfine >/dev/null 2>&1; then
        # shellcheck disable=SC2086
        env ${CMDS[$i]%%|*} hyperfine -N --runs "$per" --warmup 2 --export-json "$TMP/h.json" "${CMDS[$i]#*|}" >/dev/null 2>&1
        python3 -c 'import json,sys; print("\n".join(str(t) for t in json.load(open(sys.argv[1]))["results"][0]["times"]))' "$TMP/h.json" >>"$TMP/$i.times"
      else
        # shellcheck disable=SC2086
        env ${CMDS[$i]%%|*} python3 - "$per" "${CMDS[$i]#*|}" >>"$TMP/$i.times" <<'PY'
import subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2].split()
for i in range(runs + 2):
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    if i >= 2:
        print(time.perf_counter() - t0)
PY
      fi
    done
  done
  for i in "${!CMDS[@]}"; do
    python3 -c 'import json,statistics,sys; t=[float(x) for x in open(sys.argv[1])]; json.dump({"median": statistics.median(t), "min": min(t), "max": max(t), "n": len(t)}, open(sys.argv[2], "w"))' "$TMP/$i.times" "$TMP/$i.json"
  done
}

ms() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.2f (%.2f-%.2f)" % (1e3*r["median"], 1e3*r["min"], 1e3*r["max"]))' "$1"; }
ratio() { python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["median"]; b=json.load(open(sys.argv[2]))["median"]; print("%.2f" % (a/b))' "$1" "$2"; }

for pair in "$@"; do
  label=${pair%%=*}
  bin=${pair#*=}
  [ -x "$bin" ] || continue
  add "$label estimate" "NAPKIN_STARTUP=1|$bin $ESTIMATE"
  add "$label version" "NAPKIN_STARTUP=1|$bin --version"
  add "$label nomodule" "NAPKIN_CUDA_MODULE=/nonexistent/libnapkin_cuda.so|$bin $ESTIMATE"
done
run_all

echo "| binary | estimate ms, median (min-max) | --version ms | estimate / --version | NEEDED libraries |"
echo "|---|---|---|---|---|"
i=0
for pair in "$@"; do
  label=${pair%%=*}
  bin=${pair#*=}
  [ -x "$bin" ] || { echo "| $label | not built ($bin) | | | |"; continue; }
  needed=$(readelf -d "$bin" 2>/dev/null | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')
  echo "| $label | $(ms "$TMP/$i.json") | $(ms "$TMP/$((i + 1)).json") | $(ratio "$TMP/$i.json" "$TMP/$((i + 1)).json") | $needed|"
  echo "| $label, NAPKIN_CUDA_MODULE=/nonexistent | $(ms "$TMP/$((i + 2)).json") | | | |"
  i=$((i + 3))
done
echo
echo "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["n"])' "$TMP/0.json") runs of each command, in $ROUNDS interleaved rounds; $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%dT%H:%MZ)"
