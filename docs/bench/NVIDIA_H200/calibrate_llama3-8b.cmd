+ build-gpu/src/napkin calibrate --model llama3-8b --device cuda --micro-batch 1 --seq 2048 --json
