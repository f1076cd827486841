+ python3 tests/gpu/calibrate_torch.py --config docs/bench/NVIDIA_H200/hf_gpt2 --micro-batch 1 --seq 2048 --napkin-json docs/bench/NVIDIA_H200/calibrate_gpt2.json
