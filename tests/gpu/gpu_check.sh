#!/usr/bin/env bash
# The one command a user with a GPU runs to check napkin against the GPU and PyTorch:
#   tests/gpu/gpu_check.sh [BUILD_DIR]      (configures and builds BUILD_DIR, default build-gpu)
# It builds napkin and its CUDA module (libnapkin_cuda.so, beside the binary, which napkin
# loads when a command needs the GPU), runs the bench tests, napkin bench in every dtype, a
# sweep and a batched product, bench --memory, the same products in PyTorch (tests/gpu/torch_mm_bench.py),
# napkin calibrate against a real PyTorch training step, and ends with a summary table.
# Everything lands under docs/bench/<gpu name>/.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build-gpu}
if [ ! -x "$BUILD/src/napkin" ] || [ ! -f "$BUILD/src/libnapkin_cuda.so" ]; then
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DNAPKIN_BUILD_TESTS=ON
  cmake --build "$BUILD" -j"$(nproc)"
fi
NAPKIN="$BUILD/src/napkin"
export NAPKIN_CUDA_MODULE="$PWD/$BUILD/src/libnapkin_cuda.so"  # this build's module, nothing else
if [ ! -f "$NAPKIN_CUDA_MODULE" ]; then
  echo "no CUDA module in $BUILD/src: CMake did not find the CUDA Toolkit (see its 'napkin: CUDA backend' line)" >&2
  exit 1
fi
# napkin says in one line why the GPU cannot be used (no driver, driver too old, no device).
if ! "$NAPKIN" bench --list-devices --json | python3 -c 'import json,sys; d=json.load(sys.stdin)[0]; print(d["detail"]); sys.exit(0 if d["available"] else 1)'; then
  echo "the CUDA device is not usable (above); nothing measured" >&2
  exit 1
fi
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' /' '__')
OUT="docs/bench/$GPU"
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,memory.total --format=csv > "$OUT/nvidia-smi.csv"

run() {  # run NAME ARGS...: keep the command, its output and its exit status
  local name=$1; shift
  echo "+ $*" | tee "$OUT/$name.cmd"
  if "$@" > "$OUT/$name.json" 2> "$OUT/$name.err"; then echo "  ok"; else echo "  FAILED ($?): $(tail -1 "$OUT/$name.err")"; fi
}

ctest --test-dir "$BUILD" -R bench --output-on-failure | tee "$OUT/ctest.txt" || true
"$NAPKIN" bench --list-devices | tee "$OUT/devices.txt"
for dt in bf16 fp16 fp8 tf32 fp32 fp64 int8; do
  run "napkin_${dt}_8192" "$NAPKIN" bench --device cuda --dtype "$dt" --shape 8192x8192x8192 --json
done
run napkin_bf16_sweep "$NAPKIN" bench --device cuda --dtype bf16 --sweep m=2048:16384:2048,n=8192,k=8192 --json
run napkin_bf16_noflush "$NAPKIN" bench --device cuda --dtype bf16 --shape 8192x8192x8192 --no-flush --json
# Attention's per (sequence, head) products of llama3-8b at seq 2048: 32 heads, one call.
run napkin_bf16_batch32 "$NAPKIN" bench --device cuda --dtype bf16 --shape 2048x2048x128 --batch 32 --json
# Memory bandwidth (bench --memory: a device-to-device copy of 1 GiB buffers), and NVIDIA's own
# nvbandwidth device-local copy beside it where it is installed.
run napkin_memory "$NAPKIN" bench --memory --device cuda --json
if command -v nvbandwidth >/dev/null; then
  nvbandwidth -t device_local_copy | tee "$OUT/nvbandwidth_device_local_copy.txt" || true
fi
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  for dt in bf16 fp16 fp8 tf32 fp32 fp64; do
    run "torch_${dt}_8192" python3 tests/gpu/torch_mm_bench.py --dtype "$dt" --shape 8192x8192x8192
  done
else
  echo "PyTorch with CUDA not found: skipping the torch comparison" | tee "$OUT/torch_skipped.txt"
fi

# napkin calibrate on the GPU, and the same model's real forward+backward step in PyTorch
# (random weights, config written from napkin's own spec: the device reaches no model hub).
for model in gpt2 llama3-8b; do
  seq=2048
  [ "$model" = gpt2 ] && seq=1024  # GPT-2's learned position table has 1024 rows: PyTorch's gather fails past it
  run "calibrate_$model" "$NAPKIN" calibrate --model "$model" --device cuda --micro-batch 1 --seq "$seq" --json
  cfg="$OUT/hf_$model"
  mkdir -p "$cfg"
  "$NAPKIN" models show "$model" --json | python3 -c '
import json, sys
m = json.load(sys.stdin)
if m["mlp"] == "gelu":
    c = {"model_type": "gpt2", "n_embd": m["d_model"], "n_layer": m["layers"], "n_head": m["heads"],
         "n_inner": m["d_ff"], "vocab_size": m["vocab"], "n_positions": m["context"], "tie_word_embeddings": m["tied_embeddings"]}
else:
    c = {"model_type": "llama", "hidden_size": m["d_model"], "num_hidden_layers": m["layers"],
         "num_attention_heads": m["heads"], "num_key_value_heads": m["kv_heads"], "head_dim": m["head_dim"],
         "intermediate_size": m["d_ff"], "vocab_size": m["vocab"], "max_position_embeddings": m["context"],
         "tie_word_embeddings": m["tied_embeddings"]}
json.dump(c, sys.stdout, indent=1)' > "$cfg/config.json"
  if python3 -c "import torch, transformers; assert torch.cuda.is_available()" 2>/dev/null; then
    peak=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["peak_flops_per_s"] / 1e12)' "$OUT/calibrate_$model.json" 2>/dev/null || echo "")
    run "torch_step_$model" python3 tests/gpu/calibrate_torch.py --config "$cfg" --micro-batch 1 --seq "$seq" \
      --napkin-json "$OUT/calibrate_$model.json" ${peak:+--peak-tflops "$peak"}
  fi
done

# The summary: napkin's median throughput and MFU per dtype, PyTorch's, and their ratio
# (issue 4's targets: bf16 8192^3 >= torch.mm, 80% MFU bf16, 70% fp8); then calibrate's
# measured MFU beside the real step's.
python3 - "$OUT" <<'PY' | tee "$OUT/summary.txt"
import json, os, sys
out = sys.argv[1]
def load(name, key="results"):
    try:
        with open(os.path.join(out, name + ".json")) as f:
            j = json.load(f)
        return j[key][0] if key else j
    except Exception:
        return None
def cell(x, fmt):
    return fmt.format(x) if x is not None else "-"
rows = [("product", "napkin TFLOP/s", "MFU", "torch TFLOP/s", "napkin/torch", "check")]
for dt in ("bf16", "fp16", "fp8", "tf32", "fp32", "fp64", "int8"):
    n, t = load(f"napkin_{dt}_8192"), load(f"torch_{dt}_8192")
    nf = n["flops_per_s_median"] / 1e12 if n else None
    tf = t["flops_per_s_median"] / 1e12 if t else None
    rows.append((f"{dt} 8192^3", cell(nf, "{:.1f}"), cell(n and n["mfu"] and 100 * n["mfu"], "{:.1f}%"),
                 cell(tf, "{:.1f}"), cell(nf / tf if nf and tf else None, "{:.3f}"),
                 ("ok" if n["check"]["ok"] else "WRONG") if n else "failed"))
for name, label in (("napkin_bf16_noflush", "bf16 8192^3 no flush"), ("napkin_bf16_batch32", "bf16 2048x2048x128 x32")):
    n = load(name)
    rows.append((label, cell(n and n["flops_per_s_median"] / 1e12, "{:.1f}"), cell(n and n["mfu"] and 100 * n["mfu"], "{:.1f}%"),
                 "-", "-", ("ok" if n["check"]["ok"] else "WRONG") if n else "failed"))
for model in ("gpt2", "llama3-8b"):
    c, s = load(f"calibrate_{model}", None), load(f"torch_step_{model}", None)
    rows.append((f"calibrate {model} seq {1024 if model == 'gpt2' else 2048}", "-", cell(c and 100 * c["mfu"], "{:.1f}%"),
                 "-", cell(s and s.get("mfu_real") and 100 * s["mfu_real"], "real step MFU {:.1f}%"), "ok" if c else "failed"))
m = load("napkin_memory", None)
rows.append(("memory: device copy 1 GiB", cell(m and m["bytes_per_s"] / 1e12, "{:.3f} TB/s"),
             cell(m and m["mbu"] and 100 * m["mbu"], "MBU {:.1f}%"), "-", "-",
             ("ok" if m["check"]["ok"] else "WRONG") if m else "failed"))
widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
for r in rows:
    print("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths))))
PY
