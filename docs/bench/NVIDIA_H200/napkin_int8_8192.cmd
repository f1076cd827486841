+ build-gpu/src/napkin bench --device cuda --dtype int8 --shape 8192x8192x8192 --json
