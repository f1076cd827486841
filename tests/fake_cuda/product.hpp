#pragma once
// A matrix product issued by cublasLtMatmul, computed on the host: D = alpha·op(A)·op(B)
// (+ beta·C), column-major, per batch member, in the arithmetic the compute type specifies
// (cuBLASLt docs, cublasLtMatmul: "D = alpha*(A*B) + beta*(C)"). Entries of D are computed
// when something reads them (a copy to the host, a later write to A or B, cudaFree), so a
// benchmark that issues thousands of products costs the stand-in a few dot products.
#include <cublasLt.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "state.hpp"

namespace fake {

struct Operand {
  cudaDataType_t type{};
  bool transposed = false;   // op() = transpose: the stored matrix is the other way round
  std::int64_t ld = 0;       // leading dimension, in elements
  std::int64_t stride = 0;   // between batch members, in elements
  const unsigned char* data = nullptr;  // element 0 of batch member 0, host copy of the device bytes
  std::size_t bytes = 0;                // readable from `data` (the rest of the allocation)
  std::shared_ptr<const std::vector<unsigned char>> keep;  // the contents as they were when issued
};

struct Deferred {
  cublasComputeType_t compute_type{};
  cudaDataType_t scale{};
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  Operand a, b;
  cudaDataType_t d_type{};
  std::int64_t ldd = 0, stride_d = 0;
  Alloc* d = nullptr;      // where D lives, and the byte offset of its element 0
  std::size_t d_off = 0;
  double alpha = 1;        // the scale-type value, widened
  double scale_ab = 1;     // FP8: scale_A · scale_B (1 when unset)
  double scale_d = 1;      // FP8 output: scale_D
  std::vector<bool> done;  // per entry of D, batch-major then column-major
  std::string key;         // identifies the product and its inputs' contents, to skip recomputation
  bool settled = false;    // every entry computed

  std::size_t entries() const { return static_cast<std::size_t>(batch * m * n); }
  void compute(std::size_t entry);  // writes D's entry into d->bytes
  void compute_all();
};

// Bytes per element of the types cublasLtMatmul takes.
std::size_t type_bytes(cudaDataType_t t);

}  // namespace fake
