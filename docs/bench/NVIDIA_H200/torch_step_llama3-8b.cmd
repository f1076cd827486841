+ python3 tests/gpu/calibrate_torch.py --config docs/bench/NVIDIA_H200/hf_llama3-8b --micro-batch 1 --seq 2048 --napkin-json docs/bench/NVIDIA_H200/calibrate_llama3-8b.json --peak-tflops 989.5
