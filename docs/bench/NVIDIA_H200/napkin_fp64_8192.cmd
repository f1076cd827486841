+ build-gpu/src/napkin bench --device cuda --dtype fp64 --shape 8192x8192x8192 --json
