+ build-gpu/src/napkin bench --memory --device cuda --json
