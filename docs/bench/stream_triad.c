/* A reference for `napkin bench --memory` on a CPU: STREAM's copy and triad (McCalpin, stream.c)
   in twenty lines, OpenMP over every core, static schedule (each thread first-touches its slice),
   best of 10, bytes counted as STREAM counts them. Build and run:
     gcc -O3 -march=native -fopenmp docs/bench/stream_triad.c -o /tmp/triad && /tmp/triad [MiB per array] */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  const long n = (argc > 1 ? atol(argv[1]) : 256) * 1048576L / 8;
  double *a = malloc(n * 8), *b = malloc(n * 8), *c = malloc(n * 8), best_copy = 1e30, best_triad = 1e30;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) a[i] = 1.0 + (i & 1023) / 1024.0, b[i] = 0.5, c[i] = 0.25;
  for (int r = 0; r < 10; r++) {
    double t = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) c[i] = a[i];
    double t2 = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) b[i] = a[i] + 3.0 * c[i];
    double t3 = omp_get_wtime();
    if (t2 - t < best_copy) best_copy = t2 - t;
    if (t3 - t2 < best_triad) best_triad = t3 - t2;
  }
  printf("threads %d, arrays %ld MiB: copy %.2f GB/s, triad %.2f GB/s (check %g)\n", omp_get_max_threads(), n * 8 / 1048576,
         16.0 * n / best_copy / 1e9, 24.0 * n / best_triad / 1e9, b[n / 2] - 4 * a[n / 2]);
  return 0;
}
