+ build-gpu/src/napkin bench --device cuda --dtype bf16 --sweep m=2048:16384:2048,n=8192,k=8192 --json
