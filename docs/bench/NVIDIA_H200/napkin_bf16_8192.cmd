+ build-gpu/src/napkin bench --device cuda --dtype bf16 --shape 8192x8192x8192 --json
