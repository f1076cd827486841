"""One line per napkin bench --json file: products, mean / median / best TFLOP/s, and the SM
clock, power and temperature napkin read at the end (tests/gpu/sustained_clock.sh)."""
import json
import sys

for path in sys.argv[1:]:
    r = json.load(open(path))["results"][0]
    name = path.rsplit("/", 1)[-1].removesuffix(".json")
    print(f"{name:>10}: {r['iterations']} products, mean {r['flops'] / r['time_s_mean'] / 1e12:.1f} TFLOP/s, "
          f"median {r['flops_per_s_median'] / 1e12:.1f}, best {r['flops_per_s_max'] / 1e12:.1f}; "
          f"SM clock {r.get('sm_clock_mhz')} MHz, {r.get('power_watts')} W, {r.get('temperature_c')} C at the end")
