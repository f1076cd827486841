+ python3 tests/gpu/torch_mm_bench.py --dtype fp8 --shape 8192x8192x8192
