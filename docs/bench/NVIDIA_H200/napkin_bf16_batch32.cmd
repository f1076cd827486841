+ build-gpu/src/napkin bench --device cuda --dtype bf16 --shape 2048x2048x128 --batch 32 --json
