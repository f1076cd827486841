+ build-gpu/src/napkin bench --device cuda --dtype tf32 --shape 8192x8192x8192 --json
