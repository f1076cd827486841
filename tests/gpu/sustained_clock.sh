#!/usr/bin/env bash
# Does a GPU hold the matrix rate of a short benchmark through a minute of back-to-back products?
#   tests/gpu/sustained_clock.sh [BUILD_DIR] [OUT_DIR]
# napkin's GEMM efficiency comes from short benchmarks (MAMF); a training step runs products for
# minutes. This times one bf16 8192^3 product three ways on an idle GPU — a short run (50 products,
# no warm-up), a minute of products back to back, and a short run again — while nvidia-smi logs the
# SM clock, power and the clock-event reasons every 200 ms. It changes no clock or power setting.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build-gpu}
OUT=${2:-docs/bench/sustained}
NAPKIN="$BUILD/src/napkin"
export NAPKIN_CUDA_MODULE="${NAPKIN_CUDA_MODULE:-$PWD/$BUILD/src/libnapkin_cuda.so}"
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,power.limit,power.default_limit,temperature.gpu --format=csv > "$OUT/gpu.csv"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active \
  --format=csv -lms 200 > "$OUT/smi.csv" &
SMI=$!
trap 'kill $SMI 2>/dev/null || true' EXIT
bench() {  # bench NAME ITERS
  date +%s.%N > "$OUT/$1.start"
  "$NAPKIN" bench --device cuda --dtype bf16 --shape 8192x8192x8192 --algos 1 --warmup 0 --iters "$2" --json > "$OUT/$1.json" 2> "$OUT/$1.err" ||
    echo "$1 failed: $(tail -1 "$OUT/$1.err")"
  date +%s.%N > "$OUT/$1.end"
}
sleep 3                      # the idle clock first
bench short_cold 50
bench minute 40000           # ~60 s of products at ~750 TFLOP/s
bench short_hot 50
sleep 2
kill $SMI 2>/dev/null || true
python3 tests/gpu/bench_summary.py "$OUT/short_cold.json" "$OUT/minute.json" "$OUT/short_hot.json" | tee "$OUT/summary.txt" || true
