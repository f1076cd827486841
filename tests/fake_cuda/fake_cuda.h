/* The CPU stand-in for the CUDA API, seen from a test: live-object counts, violations, and
 * a reset that also sets the faults (otherwise read from NAPKIN_FAKE_CUDA_FAULTS).
 * Processes that only run napkin read the same facts from NAPKIN_FAKE_CUDA_REPORT. */
#ifndef NAPKIN_FAKE_CUDA_H
#define NAPKIN_FAKE_CUDA_H
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  long allocations, streams, events, lt_handles, matmul_descs, layouts, preferences, nvml_inits;
} napkin_fake_cuda_live;

/* Forgets every object and violation and reconfigures from the environment, with `faults`
 * (a NAPKIN_FAKE_CUDA_FAULTS list) in place of the environment's when not null. */
void napkin_fake_cuda_reset(const char* faults);
napkin_fake_cuda_live napkin_fake_cuda_live_objects(void);
int napkin_fake_cuda_violation_count(void);
const char* napkin_fake_cuda_violation(int i);
/* Times work was issued to a non-blocking stream the host had let run dry. */
long napkin_fake_cuda_refills(void);
/* Calls of one function ("cudaMemcpy") since the last reset. */
long napkin_fake_cuda_calls(const char* function);

#ifdef __cplusplus
}
#endif
#endif
