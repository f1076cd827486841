#include "bench/cuda/cuda_matmul.hpp"

#include <cstdint>

namespace napkin::bench::cuda {

LtTypes lt_types(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp64: case Dtype::fp64_tensor: return {CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F};
    case Dtype::tf32: return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
    case Dtype::fp16: return {CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case Dtype::bf16: return {CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    // cuBLASLt FP8: E4M3 x E4M3 -> BF16 D with fp32 accumulation and per-tensor scales.
    case Dtype::fp8: return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    // IMMA: int8 inputs, int32 accumulation, int32 D and int32 alpha/beta.
    case Dtype::int8: return {CUDA_R_8I, CUDA_R_32I, CUDA_R_32I, CUBLAS_COMPUTE_32I};
    default: return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
  }
}

double output_bytes(Dtype dtype) { return dtype == Dtype::fp8 ? 2 : dtype == Dtype::int8 ? 4 : dtype_bytes(dtype); }

LtMatmul::LtMatmul(cublasLtHandle_t handle, const Shape& shape, Dtype dtype, const void* scale_one)
    : handle_(handle), dtype_(dtype), shape_(shape) {
  const LtTypes t = lt_types(dtype);
  const auto M = static_cast<std::uint64_t>(shape.m), N = static_cast<std::uint64_t>(shape.n),
             K = static_cast<std::uint64_t>(shape.k);
  try {
    check(cublasLtMatmulDescCreate(&desc_, t.compute, t.scale), "cublasLtMatmulDescCreate");
    const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
    check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)), "set TRANSA");
    check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb)), "set TRANSB");
    if (dtype == Dtype::fp8) {
      check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_one, sizeof(scale_one)),
            "set A_SCALE_POINTER");
      check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_one, sizeof(scale_one)),
            "set B_SCALE_POINTER");
    }
    check(cublasLtMatrixLayoutCreate(&a_, t.input, K, M, static_cast<std::int64_t>(K)), "cublasLtMatrixLayoutCreate(A)");
    check(cublasLtMatrixLayoutCreate(&b_, t.input, K, N, static_cast<std::int64_t>(K)), "cublasLtMatrixLayoutCreate(B)");
    check(cublasLtMatrixLayoutCreate(&d_, t.output, M, N, static_cast<std::int64_t>(M)), "cublasLtMatrixLayoutCreate(D)");
    if (shape.batch > 1) {
      const auto batch = static_cast<std::int32_t>(shape.batch);
      const std::int64_t strides[] = {static_cast<std::int64_t>(K * M), static_cast<std::int64_t>(K * N),
                                      static_cast<std::int64_t>(M * N)};
      cublasLtMatrixLayout_t layouts[] = {a_, b_, d_};
      for (int i = 0; i < 3; ++i) {
        check(cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch),
              "set BATCH_COUNT");
        check(cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &strides[i],
                                               sizeof strides[i]),
              "set STRIDED_BATCH_OFFSET");
      }
    }
  } catch (...) {
    release();
    throw;
  }
}

LtMatmul::~LtMatmul() { release(); }

void LtMatmul::release() noexcept {
  if (d_) cublasLtMatrixLayoutDestroy(d_);
  if (b_) cublasLtMatrixLayoutDestroy(b_);
  if (a_) cublasLtMatrixLayoutDestroy(a_);
  if (desc_) cublasLtMatmulDescDestroy(desc_);
  d_ = b_ = a_ = nullptr;
  desc_ = nullptr;
}

std::vector<cublasLtMatmulHeuristicResult_t> LtMatmul::heuristic(int count, std::size_t workspace_bytes) const {
  cublasLtMatmulPreference_t pref = nullptr;
  check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  const std::uint64_t ws = workspace_bytes;
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(count));
  int returned = 0;
  cublasStatus_t s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_, b_, d_, d_, pref, count, results.data(), &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  if (s == CUBLAS_STATUS_NOT_SUPPORTED || (s == CUBLAS_STATUS_SUCCESS && returned == 0))
    throw Error("cuBLASLt has no " + std::string(dtype_name(dtype_)) + " algorithm for " + shape_text(shape_) +
                    (dtype_ == Dtype::fp8    ? " (FP8 needs M, N and K multiples of 16)"
                     : dtype_ == Dtype::int8 ? " (int8 needs M and K multiples of 4)"
                                             : ""),
                ExitCode::bad_input);
  check(s, "cublasLtMatmulAlgoGetHeuristic");
  results.resize(static_cast<std::size_t>(returned));
  return results;
}

cublasStatus_t LtMatmul::run(const cublasLtMatmulAlgo_t& algo, const void* a, const void* b, void* d, void* workspace,
                             std::size_t workspace_bytes, cudaStream_t stream) const {
  // alpha = 1, beta = 0 in the scale type: double for fp64, int32 for int8, float otherwise.
  const double alpha64 = 1, beta64 = 0;
  const float alpha32 = 1, beta32 = 0;
  const std::int32_t alpha_i = 1, beta_i = 0;
  const cudaDataType_t scale = lt_types(dtype_).scale;
  const void* alpha = scale == CUDA_R_64F ? static_cast<const void*>(&alpha64)
                      : scale == CUDA_R_32I ? static_cast<const void*>(&alpha_i)
                                            : static_cast<const void*>(&alpha32);
  const void* beta = scale == CUDA_R_64F ? static_cast<const void*>(&beta64)
                     : scale == CUDA_R_32I ? static_cast<const void*>(&beta_i)
                                           : static_cast<const void*>(&beta32);
  return cublasLtMatmul(handle_, desc_, alpha, a, a_, b, b_, beta, d, d_, d, d_, &algo, workspace, workspace_bytes, stream);
}

std::string LtMatmul::describe(const cublasLtMatmulAlgo_t& algo) {
  // Types per cublasLt.h: ID and SPLITK_NUM int32_t, TILE_ID and STAGES_ID uint32_t.
  std::int32_t id = -1, splitk = -1;
  std::uint32_t tile = 0, stages = 0;
  std::size_t written = 0;
  auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attr, void* buf, std::size_t size) {
    return cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, buf, size, &written) == CUBLAS_STATUS_SUCCESS;
  };
  if (!get(CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id)) return "algo ?";
  std::string out = "algo " + std::to_string(id);
  if (get(CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile)) out += " tile " + std::to_string(tile);
  if (get(CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages)) out += " stages " + std::to_string(stages);
  if (get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk)) out += " split-k " + std::to_string(splitk);
  return out;
}

}  // namespace napkin::bench::cuda
