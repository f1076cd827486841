+ build-gpu/src/napkin bench --device cuda --dtype fp32 --shape 8192x8192x8192 --json
