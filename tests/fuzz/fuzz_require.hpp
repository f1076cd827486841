#pragma once
// A broken invariant in a fuzz target: say which, then abort so libFuzzer saves the input.
#include <cstdio>
#include <cstdlib>

#define require(ok)                                                                   \
  do {                                                                                \
    if (!(ok)) {                                                                      \
      std::fprintf(stderr, "invariant failed at %s:%d: %s\n", __FILE__, __LINE__, #ok); \
      std::abort();                                                                   \
    }                                                                                 \
  } while (0)
