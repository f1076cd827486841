// The stand-in against NVIDIA's documented contract, called directly as a CUDA program would.
// Expected values are hand arithmetic on small integer matrices (exact in every format used)
// or the documented rule; nothing here comes from napkin's code.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "fake_cuda.h"

namespace {

std::string violations() {
  std::string out;
  for (int i = 0; i < napkin_fake_cuda_violation_count(); ++i) out += std::string(napkin_fake_cuda_violation(i)) + "\n";
  return out;
}

bool no_live_objects() {
  const auto l = napkin_fake_cuda_live_objects();
  return l.allocations == 0 && l.streams == 0 && l.events == 0 && l.lt_handles == 0 && l.matmul_descs == 0 &&
         l.layouts == 0 && l.preferences == 0 && l.nvml_inits == 0;
}

std::uint16_t bf16(float x) { return __nv_bfloat16_raw(__float2bfloat16(x)).x; }
float from_bf16(std::uint16_t b) {
  __nv_bfloat16_raw r;
  r.x = b;
  return __bfloat162float(__nv_bfloat16(r));
}

void* device_copy(const void* host, std::size_t bytes) {
  void* d = nullptr;
  REQUIRE(cudaMalloc(&d, bytes) == cudaSuccess);
  REQUIRE(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice) == cudaSuccess);
  return d;
}

// One product with every descriptor napkin uses, torn down afterwards.
struct Product {
  cublasLtHandle_t lt = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> results = std::vector<cublasLtMatmulHeuristicResult_t>(8);
  int returned = 0;
  cublasStatus_t heuristic_status = CUBLAS_STATUS_SUCCESS;
  void* workspace = nullptr;

  Product(cublasComputeType_t compute, cudaDataType_t scale, cublasOperation_t ta, cublasOperation_t tb, cudaDataType_t in,
          cudaDataType_t out, std::uint64_t a_rows, std::uint64_t a_cols, std::uint64_t b_rows, std::uint64_t b_cols,
          std::uint64_t m, std::uint64_t n, std::int64_t ldd = 0, std::int32_t batch = 1) {
    REQUIRE(cublasLtCreate(&lt) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasLtMatmulDescCreate(&desc, compute, scale) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasLtMatrixLayoutCreate(&a, in, a_rows, a_cols, static_cast<std::int64_t>(a_rows)) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasLtMatrixLayoutCreate(&b, in, b_rows, b_cols, static_cast<std::int64_t>(b_rows)) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasLtMatrixLayoutCreate(&d, out, m, n, ldd ? ldd : static_cast<std::int64_t>(m)) == CUBLAS_STATUS_SUCCESS);
    if (batch > 1) {
      const std::int64_t sa = static_cast<std::int64_t>(a_rows * a_cols), sb = static_cast<std::int64_t>(b_rows * b_cols),
                         sd = (ldd ? ldd : static_cast<std::int64_t>(m)) * static_cast<std::int64_t>(n);
      for (auto [l, stride] : {std::pair{a, sa}, std::pair{b, sb}, std::pair{d, sd}}) {
        REQUIRE(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch) == 0);
        REQUIRE(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride) == 0);
      }
    }
    REQUIRE(cublasLtMatmulPreferenceCreate(&pref) == CUBLAS_STATUS_SUCCESS);
    const std::uint64_t ws = 32u << 20;
    REQUIRE(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws) == 0);
    heuristic_status = cublasLtMatmulAlgoGetHeuristic(lt, desc, a, b, d, d, pref, 4, results.data(), &returned);
    REQUIRE(cudaMalloc(&workspace, ws) == cudaSuccess);
  }
  ~Product() {
    cudaFree(workspace);
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(d);
    cublasLtMatrixLayoutDestroy(b);
    cublasLtMatrixLayoutDestroy(a);
    cublasLtMatmulDescDestroy(desc);
    cublasLtDestroy(lt);
  }
  cublasStatus_t run(const void* alpha, const void* beta, const void* A, const void* B, void* D, cudaStream_t s = nullptr,
                     int candidate = 0) {
    return cublasLtMatmul(lt, desc, alpha, A, a, B, b, beta, D, d, D, d, &results[static_cast<std::size_t>(candidate)].algo,
                          workspace, 32u << 20, s);
  }
};

template <typename T>
std::vector<T> download(const void* d, std::size_t count) {
  std::vector<T> out(count);
  REQUIRE(cudaMemcpy(out.data(), d, count * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
  return out;
}

}  // namespace

TEST_CASE("it reports an H100 SXM by default") {
  napkin_fake_cuda_reset(nullptr);
  int n = 0, driver = 0;
  CHECK(cudaGetDeviceCount(&n) == cudaSuccess);
  CHECK(n == 1);
  CHECK(cudaDriverGetVersion(&driver) == cudaSuccess);
  CHECK(driver == 13000);
  cudaDeviceProp p;
  REQUIRE(cudaGetDeviceProperties(&p, 0) == cudaSuccess);
  CHECK(std::string(p.name) == "NVIDIA H100 80GB HBM3");
  CHECK(p.major == 9);
  CHECK(p.minor == 0);
  CHECK(p.totalGlobalMem == 80ull * 1024 * 1024 * 1024);
  CHECK(p.l2CacheSize == 50 * 1024 * 1024);
  std::size_t free_b = 0, total_b = 0;
  CHECK(cudaMemGetInfo(&free_b, &total_b) == cudaSuccess);
  CHECK(total_b == 80ull << 30);
  CHECK(free_b < total_b);
}

TEST_CASE("column-major bf16 with TRANSA = T and N: D(i,j) = sum_p op(A)(i,p) op(B)(p,j)") {
  napkin_fake_cuda_reset(nullptr);
  // m = 3, n = 2, k = 4. op(A)(i,p) = i + p, op(B)(p,j) = p - j: all small integers, exact in bf16.
  // D(i,j) = sum_p (i + p)(p - j) = sum_p p^2 + (i - j) sum_p p - i j 4 = 14 + 6 (i - j) - 4 i j.
  const int m = 3, n = 2, k = 4;
  std::vector<std::uint16_t> a_t(k * m), a_n(m * k), b(k * n);
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p) {
      a_t[p + i * k] = bf16(float(i + p));  // stored k x m, ld k: op(A) = A^T
      a_n[i + p * m] = bf16(float(i + p));  // stored m x k, ld m
    }
  for (int p = 0; p < k; ++p)
    for (int j = 0; j < n; ++j) b[p + j * k] = bf16(float(p - j));
  void *dat = device_copy(a_t.data(), a_t.size() * 2), *dan = device_copy(a_n.data(), a_n.size() * 2),
       *db = device_copy(b.data(), b.size() * 2), *dd = nullptr;
  REQUIRE(cudaMalloc(&dd, m * n * 2) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(nullptr) == cudaSuccess);
  const float one = 1, zero = 0;
  for (bool transposed : {true, false}) {
    CAPTURE(transposed);
    Product pr(CUBLAS_COMPUTE_32F, CUDA_R_32F, transposed ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, CUDA_R_16BF, CUDA_R_16BF,
               transposed ? k : m, transposed ? m : k, k, n, m, n);
    REQUIRE(pr.heuristic_status == CUBLAS_STATUS_SUCCESS);
    REQUIRE(pr.returned == 4);
    REQUIRE(pr.run(&one, &zero, transposed ? dat : dan, db, dd) == CUBLAS_STATUS_SUCCESS);
    const auto got = download<std::uint16_t>(dd, m * n);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) CHECK(from_bf16(got[i + j * m]) == float(14 + 6 * (i - j) - 4 * i * j));
  }
  for (void* p : {dat, dan, db, dd}) CHECK(cudaFree(p) == cudaSuccess);
  CHECK(violations() == "");
  CHECK(no_live_objects());
}

TEST_CASE("a leading dimension larger than the rows leaves the padding alone; alpha scales in fp64") {
  napkin_fake_cuda_reset(nullptr);
  // fp64, TN, m = n = k = 2, ldd = 4: A^T = [[1,2],[3,4]] (rows i), B = [[5,6],[7,8]] (rows p).
  // op(A)·op(B) = [[19,22],[43,50]]; alpha = 2 doubles it.
  const double a[] = {1, 2, 3, 4};  // stored k x m: column i holds row i of op(A)
  const double b[] = {5, 7, 6, 8};  // stored k x n column-major
  void *da = device_copy(a, sizeof a), *db = device_copy(b, sizeof b), *dd = nullptr;
  REQUIRE(cudaMalloc(&dd, 8 * 8) == cudaSuccess);
  const double nan_fill[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
  REQUIRE(cudaMemcpy(dd, nan_fill, sizeof nan_fill, cudaMemcpyHostToDevice) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(nullptr) == cudaSuccess);
  {
    Product pr(CUBLAS_COMPUTE_64F, CUDA_R_64F, CUBLAS_OP_T, CUBLAS_OP_N, CUDA_R_64F, CUDA_R_64F, 2, 2, 2, 2, 2, 2, 4);
    const double two = 2, zero = 0;
    REQUIRE(pr.run(&two, &zero, da, db, dd) == CUBLAS_STATUS_SUCCESS);
    const auto got = download<double>(dd, 8);
    CHECK(got == std::vector<double>{38, 86, -1, -1, 44, 100, -1, -1});
  }
  for (void* p : {da, db, dd}) cudaFree(p);
  CHECK(no_live_objects());
}

TEST_CASE("TF32 rounds the inputs to 10 mantissa bits; plain fp32 does not") {
  napkin_fake_cuda_reset(nullptr);
  // 1 + 2^-12 is not a TF32 value (10 mantissa bits): it rounds to 1. With k = 1, D = A·B.
  const float a[] = {1.0f + 1.0f / 4096}, b[] = {1.0f};
  void *da = device_copy(a, 4), *db = device_copy(b, 4), *dd = nullptr;
  REQUIRE(cudaMalloc(&dd, 4) == cudaSuccess);
  cudaStreamSynchronize(nullptr);
  const float one = 1, zero = 0;
  for (auto [compute, expect] : {std::pair{CUBLAS_COMPUTE_32F_FAST_TF32, 1.0f}, std::pair{CUBLAS_COMPUTE_32F, a[0]}}) {
    Product pr(compute, CUDA_R_32F, CUBLAS_OP_T, CUBLAS_OP_N, CUDA_R_32F, CUDA_R_32F, 1, 1, 1, 1, 1, 1);
    REQUIRE(pr.run(&one, &zero, da, db, dd) == CUBLAS_STATUS_SUCCESS);
    CHECK(download<float>(dd, 1)[0] == expect);
  }
  for (void* p : {da, db, dd}) cudaFree(p);
}

TEST_CASE("FP8 E4M3: TN only, 16-byte dimensions, the allowed C/D types, and the A/B scales") {
  napkin_fake_cuda_reset(nullptr);
  const int m = 16, n = 16, k = 16;
  // A^T and B all ones: every entry of op(A)·op(B) is k = 16; scales 2 and 0.5 cancel, 2 and 2 make it 64.
  std::vector<unsigned char> ones(k * 16, __nv_cvt_float_to_fp8(1.0f, __NV_SATFINITE, __NV_E4M3));
  void *da = device_copy(ones.data(), ones.size()), *db = device_copy(ones.data(), ones.size()), *dd = nullptr;
  REQUIRE(cudaMalloc(&dd, m * n * 2) == cudaSuccess);
  const float two = 2, one_half = 0.5f;
  void *s2 = device_copy(&two, 4), *s_half = device_copy(&one_half, 4);
  cudaStreamSynchronize(nullptr);
  const float one = 1, zero = 0;
  {
    Product pr(CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_T, CUBLAS_OP_N, CUDA_R_8F_E4M3, CUDA_R_16BF, k, m, k, n, m, n);
    REQUIRE(pr.heuristic_status == CUBLAS_STATUS_SUCCESS);
    REQUIRE(pr.run(&one, &zero, da, db, dd) == CUBLAS_STATUS_SUCCESS);
    CHECK(from_bf16(download<std::uint16_t>(dd, 1)[0]) == 16.0f);
    for (auto [sa, sb, expect] : {std::tuple{s2, s_half, 16.0f}, std::tuple{s2, s2, 64.0f}}) {
      REQUIRE(cublasLtMatmulDescSetAttribute(pr.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa) == 0);
      REQUIRE(cublasLtMatmulDescSetAttribute(pr.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb) == 0);
      REQUIRE(pr.run(&one, &zero, da, db, dd) == CUBLAS_STATUS_SUCCESS);
      CHECK(from_bf16(download<std::uint16_t>(dd, m * n)[m * n - 1]) == expect);
    }
  }
  // NN is refused on Hopper; so are dimensions off 16 bytes and a D type the table lacks.
  Product nn(CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_N, CUBLAS_OP_N, CUDA_R_8F_E4M3, CUDA_R_16BF, m, k, k, n, m, n);
  CHECK(nn.heuristic_status == CUBLAS_STATUS_NOT_SUPPORTED);
  Product odd(CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_T, CUBLAS_OP_N, CUDA_R_8F_E4M3, CUDA_R_16BF, 24, 24, 24, 16, 24, 16);
  CHECK(odd.heuristic_status == CUBLAS_STATUS_NOT_SUPPORTED);  // k = 24 bytes
  Product f64_out(CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_T, CUBLAS_OP_N, CUDA_R_8F_E4M3, CUDA_R_64F, k, m, k, n, m, n);
  CHECK(f64_out.heuristic_status == CUBLAS_STATUS_NOT_SUPPORTED);
  Product tf32(CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, CUBLAS_OP_T, CUBLAS_OP_N, CUDA_R_8F_E4M3, CUDA_R_16BF, k, m, k, n, m, n);
  CHECK(tf32.heuristic_status == CUBLAS_STATUS_NOT_SUPPORTED);
  for (void* p : {da, db, dd, s2, s_half}) cudaFree(p);
}

TEST_CASE("int8 IMMA: int32 accumulation and output, TN only, m and k multiples of 4") {
  napkin_fake_cuda_reset(nullptr);
  const int m = 4, n = 3, k = 8;
  // op(A)(i,p) = i - p, op(B)(p,j) = j + 1: D(i,j) = (j + 1) sum_p (i - p) = (j + 1)(8 i - 28).
  std::vector<signed char> a(k * m), b(k * n);
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p) a[p + i * k] = static_cast<signed char>(i - p);
  for (int p = 0; p < k; ++p)
    for (int j = 0; j < n; ++j) b[p + j * k] = static_cast<signed char>(j + 1);
  void *da = device_copy(a.data(), a.size()), *db = device_copy(b.data(), b.size()), *dd = nullptr;
  REQUIRE(cudaMalloc(&dd, m * n * 4) == cudaSuccess);
  cudaStreamSynchronize(nullptr);
  const std::int32_t one = 1, zero = 0;
  Product pr(CUBLAS_COMPUTE_32I, CUDA_R_32I, CUBLAS_OP_T, CUBLAS_OP_N, CUDA_R_8I, CUDA_R_32I, k, m, k, n, m, n);
  REQUIRE(pr.heuristic_status == CUBLAS_STATUS_SUCCESS);
  REQUIRE(pr.run(&one, &zero, da, db, dd) == CUBLAS_STATUS_SUCCESS);
  const auto got = download<std::int32_t>(dd, m * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) CHECK(got[i + j * m] == (j + 1) * (8 * i - 28));
  Product nn(CUBLAS_COMPUTE_32I, CUDA_R_32I, CUBLAS_OP_N, CUBLAS_OP_N, CUDA_R_8I, CUDA_R_32I, m, k, k, n, m, n);
  CHECK(nn.heuristic_status == CUBLAS_STATUS_NOT_SUPPORTED);
  Product six(CUBLAS_COMPUTE_32I, CUDA_R_32I, CUBLAS_OP_T, CUBLAS_OP_N, CUDA_R_8I, CUDA_R_32I, k, 6, k, n, 6, n);
  CHECK(six.heuristic_status == CUBLAS_STATUS_NOT_SUPPORTED);  // m = 6
  for (void* p : {da, db, dd}) cudaFree(p);
}

TEST_CASE("strided batch: BATCH_COUNT products, each STRIDED_BATCH_OFFSET elements apart") {
  napkin_fake_cuda_reset(nullptr);
  // 3 batch members of 1x1x2 products in fp32: member b has A^T = [b, 1], B = [2, b]: D_b = 2b + b = 3b.
  const float a[] = {0, 1, 1, 1, 2, 1}, b[] = {2, 0, 2, 1, 2, 2};
  void *da = device_copy(a, sizeof a), *db = device_copy(b, sizeof b), *dd = nullptr;
  REQUIRE(cudaMalloc(&dd, 3 * 4) == cudaSuccess);
  cudaStreamSynchronize(nullptr);
  const float one = 1, zero = 0;
  Product pr(CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_T, CUBLAS_OP_N, CUDA_R_32F, CUDA_R_32F, 2, 1, 2, 1, 1, 1, 0, 3);
  REQUIRE(pr.run(&one, &zero, da, db, dd) == CUBLAS_STATUS_SUCCESS);
  CHECK(download<float>(dd, 3) == std::vector<float>{0, 3, 6});
  for (void* p : {da, db, dd}) cudaFree(p);
}

TEST_CASE("a non-blocking stream does not wait for the legacy stream: an unsynchronised upload is a race") {
  const float a[] = {1}, b[] = {1}, one = 1, zero = 0;
  for (int variant = 0; variant < 3; ++variant) {
    CAPTURE(variant);  // 0: non-blocking, no sync; 1: non-blocking after a sync; 2: a blocking stream
    napkin_fake_cuda_reset(nullptr);
    cudaStream_t s = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&s, variant == 2 ? cudaStreamDefault : cudaStreamNonBlocking) == cudaSuccess);
    void *da = device_copy(a, 4), *db = device_copy(b, 4), *dd = nullptr;
    REQUIRE(cudaMalloc(&dd, 4) == cudaSuccess);
    if (variant == 1) REQUIRE(cudaStreamSynchronize(nullptr) == cudaSuccess);
    {
      Product pr(CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_T, CUBLAS_OP_N, CUDA_R_32F, CUDA_R_32F, 1, 1, 1, 1, 1, 1);
      const auto status = pr.run(&one, &zero, da, db, dd, s);
      if (variant == 0) {
        CHECK(status == CUBLAS_STATUS_EXECUTION_FAILED);
        CHECK(violations().find("race: cublasLtMatmul on stream") != std::string::npos);
      } else {
        CHECK(status == CUBLAS_STATUS_SUCCESS);
        CHECK(violations() == "");
      }
    }
    cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
    for (void* p : {da, db, dd}) cudaFree(p);
    CHECK(no_live_objects());
  }
}

TEST_CASE("use after free, double free, double destroy and reading unwritten memory are refused") {
  napkin_fake_cuda_reset(nullptr);
  void* p = nullptr;
  REQUIRE(cudaMalloc(&p, 64) == cudaSuccess);
  char host[64] = {};
  CHECK(cudaMemcpy(host, p, 64, cudaMemcpyDeviceToHost) != cudaSuccess);  // nothing wrote it
  CHECK(violations().find("nothing wrote") != std::string::npos);
  REQUIRE(cudaFree(p) == cudaSuccess);
  CHECK(cudaMemset(p, 0, 64) == cudaErrorInvalidValue);
  CHECK(violations().find("use after free") != std::string::npos);
  CHECK(cudaFree(p) == cudaErrorInvalidValue);
  CHECK(violations().find("double free") != std::string::npos);
  cublasLtMatmulDesc_t d = nullptr;
  REQUIRE(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS);
  CHECK(cublasLtMatmulDescDestroy(d) == CUBLAS_STATUS_SUCCESS);
  CHECK(cublasLtMatmulDescDestroy(d) == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(violations().find("destroyed twice") != std::string::npos);
  cudaEvent_t e = nullptr;
  REQUIRE(cudaEventCreate(&e) == cudaSuccess);
  CHECK(cudaEventDestroy(e) == cudaSuccess);
  CHECK(cudaEventDestroy(e) == cudaErrorInvalidResourceHandle);
  CHECK(napkin_fake_cuda_violation_count() == 5);
  CHECK(no_live_objects());
}

TEST_CASE("events time the device clock: 2 us + 2mnk / rate per product; incomplete events are not ready") {
  napkin_fake_cuda_reset(nullptr);
  const int m = 64, n = 32, k = 128;
  std::vector<std::uint16_t> a(k * m, bf16(1)), b(k * n, bf16(1));
  void *da = device_copy(a.data(), a.size() * 2), *db = device_copy(b.data(), b.size() * 2), *dd = nullptr;
  REQUIRE(cudaMalloc(&dd, m * n * 2) == cudaSuccess);
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(nullptr) == cudaSuccess);
  cudaEvent_t e0, e1;
  REQUIRE(cudaEventCreate(&e0) == cudaSuccess);
  REQUIRE(cudaEventCreate(&e1) == cudaSuccess);
  const float one = 1, zero = 0;
  {
    Product pr(CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_T, CUBLAS_OP_N, CUDA_R_16BF, CUDA_R_16BF, k, m, k, n, m, n);
    for (int candidate : {0, 2}) {
      REQUIRE(cudaEventRecord(e0, s) == cudaSuccess);
      REQUIRE(pr.run(&one, &zero, da, db, dd, s, candidate) == CUBLAS_STATUS_SUCCESS);
      REQUIRE(cudaEventRecord(e1, s) == cudaSuccess);
      float ms = 0;
      CHECK(cudaEventElapsedTime(&ms, e0, e1) == cudaErrorNotReady);
      REQUIRE(cudaEventSynchronize(e1) == cudaSuccess);
      REQUIRE(cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess);
      // README.md: bf16 at 800 TFLOP/s, candidate i takes (1 + i/4) times as long.
      const double expect_s = (2e-6 + 2.0 * m * n * k / 800e12) * (1 + 0.25 * candidate);
      CHECK(ms * 1e-3 == doctest::Approx(expect_s).epsilon(1e-6));
    }
  }
  cudaEventDestroy(e0), cudaEventDestroy(e1), cudaStreamDestroy(s);
  for (void* p : {da, db, dd}) cudaFree(p);
  CHECK(napkin_fake_cuda_violation_count() == 2);  // the premature cudaEventElapsedTime, twice
  CHECK(no_live_objects());
}

TEST_CASE("faults from NAPKIN_FAKE_CUDA_FAULTS") {
  int n = -1, driver = -1;
  napkin_fake_cuda_reset("no_driver");
  CHECK(cudaDriverGetVersion(&driver) == cudaSuccess);
  CHECK(driver == 0);
  CHECK(cudaGetDeviceCount(&n) == cudaErrorInsufficientDriver);
  napkin_fake_cuda_reset("old_driver");
  CHECK(cudaDriverGetVersion(&driver) == cudaSuccess);
  CHECK(driver == 12040);
  napkin_fake_cuda_reset("no_device");
  CHECK(cudaGetDeviceCount(&n) == cudaErrorNoDevice);
  napkin_fake_cuda_reset("malloc_fail=2");
  void *p = nullptr, *q = nullptr;
  CHECK(cudaMalloc(&p, 16) == cudaSuccess);
  CHECK(cudaMalloc(&q, 16) == cudaErrorMemoryAllocation);
  CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);
  CHECK(cudaGetLastError() == cudaSuccess);
  cudaFree(p);
  napkin_fake_cuda_reset("bad_state=2,matmul_fail=3");
  {
    const float a[] = {1}, one = 1, zero = 0;
    void *da = device_copy(a, 4), *db = device_copy(a, 4), *dd = nullptr;
    REQUIRE(cudaMalloc(&dd, 4) == cudaSuccess);
    cudaStreamSynchronize(nullptr);
    Product pr(CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_T, CUBLAS_OP_N, CUDA_R_32F, CUDA_R_32F, 1, 1, 1, 1, 1, 1);
    REQUIRE(pr.returned == 4);
    CHECK(pr.results[0].state == CUBLAS_STATUS_NOT_SUPPORTED);
    CHECK(pr.results[1].state == CUBLAS_STATUS_NOT_SUPPORTED);
    CHECK(pr.results[2].state == CUBLAS_STATUS_SUCCESS);
    CHECK(pr.run(&one, &zero, da, db, dd, nullptr, 2) == CUBLAS_STATUS_EXECUTION_FAILED);
    CHECK(pr.run(&one, &zero, da, db, dd, nullptr, 3) == CUBLAS_STATUS_SUCCESS);
    for (void* x : {da, db, dd}) cudaFree(x);
  }
  CHECK(no_live_objects());
}

TEST_CASE("device-to-device copies: the bytes arrive, 2n bytes of device time, overlap and host pointers refused") {
  napkin_fake_cuda_reset(nullptr);
  std::vector<unsigned char> host(4096);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<unsigned char>(i * 7 + 1);
  void* src = device_copy(host.data(), host.size());
  void* dst = nullptr;
  REQUIRE(cudaMalloc(&dst, host.size()) == cudaSuccess);
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  REQUIRE(cudaEventCreate(&e0) == cudaSuccess);
  REQUIRE(cudaEventCreate(&e1) == cudaSuccess);
  REQUIRE(cudaEventRecord(e0, nullptr) == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(dst, src, host.size(), cudaMemcpyDeviceToDevice, nullptr) == cudaSuccess);
  REQUIRE(cudaEventRecord(e1, nullptr) == cudaSuccess);
  REQUIRE(cudaEventSynchronize(e1) == cudaSuccess);
  float ms = 0;
  REQUIRE(cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess);
  // README: the device moves bytes at 3 TB/s; a copy reads and writes each: 2 × 4096 / 3e12 s.
  CHECK(static_cast<double>(ms) * 1e-3 == doctest::Approx(2 * 4096 / 3e12).epsilon(1e-5));
  std::vector<unsigned char> back(host.size());
  REQUIRE(cudaMemcpy(back.data(), dst, back.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(back == host);
  CHECK(violations().empty());
  // Overlapping ranges of one allocation, and a host pointer named as device memory.
  CHECK(cudaMemcpy(static_cast<char*>(src) + 16, src, 64, cudaMemcpyDeviceToDevice) == cudaErrorInvalidValue);
  CHECK(violations().find("overlapping") != std::string::npos);
  CHECK(cudaMemcpy(dst, host.data(), 64, cudaMemcpyDeviceToDevice) == cudaErrorInvalidValue);
  CHECK(violations().find("host pointer") != std::string::npos);
  CHECK(cudaEventDestroy(e0) == cudaSuccess);
  CHECK(cudaEventDestroy(e1) == cudaSuccess);
  CHECK(cudaFree(src) == cudaSuccess);
  CHECK(cudaFree(dst) == cudaSuccess);
  CHECK(no_live_objects());
}
