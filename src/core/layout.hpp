#pragma once
// How one training run is laid out over a cluster: the parallel degrees, the micro-batch and
// the memory-saving policies. One value shared by `memory` (what each GPU holds), `plan`
// (how long a step takes, and the search over layouts) and `train --mfu predicted`.
// Conventions follow Megatron-LM (Narayanan et al. 2021 §2-3; Korthikanti et al. 2022):
//   gpus = tp · cp · pp · dp; expert parallelism ep is carved out of the dp · cp ranks
//   (Megatron-core's expert-data-parallel group), so ep divides dp · cp.
#include "core/activations.hpp"

namespace napkin {

struct Layout {
  long long tp = 1;           // tensor parallel (Megatron column/row split), within a scale-up domain by default
  long long cp = 1;           // context parallel: the sequence split over cp ranks
  long long pp = 1;           // pipeline stages
  long long dp = 1;           // data-parallel replicas
  long long ep = 1;           // expert parallel (MoE only): experts split over ep of the dp·cp ranks
  long long micro_batch = 1;  // sequences per micro-batch per data-parallel replica
  long long interleave = 1;   // virtual pipeline stages per GPU (1 = plain 1F1B)
  bool sequence_parallel = false;  // Korthikanti §4.2.2: norms and dropout split over tp
  Recompute recompute = Recompute::none;
  int zero = 0;               // ZeRO stage over the data-parallel group (0..3)

  long long gpus() const { return tp * cp * pp * dp; }
};

}  // namespace napkin
