+ build-gpu/src/napkin calibrate --model gpt2 --device cuda --micro-batch 1 --seq 2048 --json
