#pragma once
// One cuBLASLt matmul configuration: D[M,N] = A^T[M,K] B[K,N] in column-major terms with A
// stored K x M and B stored K x N (both K-major, "TN": the layout FP8 and int8 IMMA require
// on Hopper), fp32 accumulation for 16-bit and FP8 inputs, TF32 via
// CUBLAS_COMPUTE_32F_FAST_TF32, int32 for int8. A batch is one strided-batched call
// (CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT / STRIDED_BATCH_OFFSET), members one after another.
#include <string>
#include <vector>

#include "bench/cuda/cuda_util.hpp"
#include "bench/shape.hpp"
#include "core/dtype.hpp"

namespace napkin::bench::cuda {

// Element types: A and B store `input`; D stores `output` (bf16 for fp8 inputs, int32 for
// int8); alpha and beta are of type `scale`.
struct LtTypes {
  cudaDataType_t input, output, scale;
  cublasComputeType_t compute;
};
LtTypes lt_types(Dtype dtype);
double output_bytes(Dtype dtype);

class LtMatmul {
 public:
  // Descriptors for `shape`; `scale_one` is a device float 1.0 used as FP8's A/B scales.
  LtMatmul(cublasLtHandle_t handle, const Shape& shape, Dtype dtype, const void* scale_one);
  ~LtMatmul();
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;

  // Up to `count` algorithms the heuristic ranks for `workspace_bytes`, whatever their
  // state (the caller skips those that are not CUBLAS_STATUS_SUCCESS); throws when none.
  std::vector<cublasLtMatmulHeuristicResult_t> heuristic(int count, std::size_t workspace_bytes) const;
  // Issues the product on `stream`; returns cuBLASLt's status (the caller decides).
  cublasStatus_t run(const cublasLtMatmulAlgo_t& algo, const void* a, const void* b, void* d, void* workspace,
                     std::size_t workspace_bytes, cudaStream_t stream) const;
  static std::string describe(const cublasLtMatmulAlgo_t& algo);

 private:
  void release() noexcept;
  cublasLtHandle_t handle_;
  Dtype dtype_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  Shape shape_;
};

}  // namespace napkin::bench::cuda
