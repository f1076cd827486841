#!/bin/sh
# Runs every fuzz target for a fixed time: run.sh BUILD_DIR SECONDS_EACH [extra libFuzzer flags]
# Seeds: the shipped specs for fuzz_spec, tests/fuzz/seeds/units for fuzz_units, the real
# config.json files of tests/data/hf for fuzz_hf_config. New inputs that
# reach new code are kept in BUILD_DIR/corpus/<target>, so a later run starts where this one ended.
# Exits non-zero on the first crash, leak, timeout (10 s per input) or out-of-memory (2 GiB).
set -eu
build=$1
seconds=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
for target in fuzz_spec fuzz_units fuzz_hf_config; do
  corpus="$build/corpus/$target"
  mkdir -p "$corpus" "$build/artifacts"
  case $target in
    fuzz_spec) seeds="$root/models $root/hardware"; dict="-dict=$here/spec.dict"; max_len=65536 ;;
    fuzz_units) seeds="$here/seeds/units"; dict=""; max_len=1024 ;;
    fuzz_hf_config) seeds=$(find "$root/tests/data/hf" -name config.json -exec dirname {} \; | tr '\n' ' ')
                    dict="-dict=$here/hf_config.dict"; max_len=65536 ;;
  esac
  echo "== $target: ${seconds} s"
  # shellcheck disable=SC2086
  "$build/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=$max_len \
    -artifact_prefix="$build/artifacts/$target-" -print_final_stats=1 $dict "$@" "$corpus" $seeds
done
