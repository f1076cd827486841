+ python3 tests/gpu/torch_mm_bench.py --dtype tf32 --shape 8192x8192x8192
