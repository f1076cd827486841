// The cuBLASLt functions napkin calls. Rules from the cuBLAS documentation (cuBLASLt API,
// cublasLtMatmul: "Datatypes Supported", the FP8 and IMMA requirement lists, "Tensor Core
// Usage") and the comments of cublasLt.h (CUDA 13.0). A configuration the documentation
// does not allow is refused with the status it names.
#include <cublasLt.h>

#include <cstring>
#include <string>

#include "product.hpp"
#include "state.hpp"

using fake::State;

namespace {

struct Desc {
  cublasComputeType_t compute{};
  cudaDataType_t scale{};
  std::int32_t pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  const void *a_scale = nullptr, *b_scale = nullptr, *d_scale = nullptr;
};

struct Layout {
  cudaDataType_t type{};
  std::uint64_t rows = 0, cols = 0;
  std::int64_t ld = 0;
  std::int32_t order = CUBLASLT_ORDER_COL, batch = 1;
  std::int64_t stride = 0;
  bool operator==(const Layout&) const = default;
};

struct Pref {
  std::uint64_t max_workspace = 0;  // default 0 (cublasLtMatmulPreferenceAttributes_t)
};

constexpr std::uint64_t algo_magic = 0x66616b65'63756461ull;  // "fakecuda"
constexpr std::size_t workspace_step = std::size_t(4) << 20;  // candidate i needs i x 4 MiB

struct Call {
  State& st;
  std::lock_guard<std::recursive_mutex> lock;
  explicit Call(const char* name) : st(fake::state()), lock(st.mutex) { st.count(name); }
};

template <typename T>
T* live(State& st, std::set<const void*>& set, const void* h, const char* call, const char* what) {
  if (h && set.count(h)) return static_cast<T*>(const_cast<void*>(h));
  st.violation(std::string(call) + ": " + what + (st.dead.count(h) ? " used after it was destroyed" : " is not valid"));
  return nullptr;
}

template <typename T>
cublasStatus_t destroy(const char* call, std::set<const void*> State::*set, long fake::Counters::*counter, const void* h) {
  Call c(call);
  if (!h) return CUBLAS_STATUS_SUCCESS;  // destroying nothing is allowed
  if (!(c.st.*set).count(h)) {
    c.st.violation(std::string(call) + (c.st.dead.count(h) ? ": destroyed twice" : ": not a valid descriptor"));
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  (c.st.*set).erase(h);
  c.st.dead.insert(h);
  c.st.graveyard.push_back(std::shared_ptr<void>(static_cast<T*>(const_cast<void*>(h))));
  --(c.st.live.*counter);
  return CUBLAS_STATUS_SUCCESS;
}

template <typename T>
bool take(const void* buf, std::size_t size, T& out) {
  if (!buf || size != sizeof(T)) return false;  // "sizeInBytes doesn't match size of internal storage"
  std::memcpy(&out, buf, sizeof(T));
  return true;
}

// The product a matmul describes, checked against the documented rules.
struct Problem {
  Desc desc;
  Layout a, b, c, d;
  std::int64_t m = 0, n = 0, k = 0;
  std::string why;  // what is not supported, for violations
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;

  bool fp8() const { return a.type == CUDA_R_8F_E4M3 || a.type == CUDA_R_8F_E5M2 || b.type == CUDA_R_8F_E4M3 || b.type == CUDA_R_8F_E5M2; }
  bool imma() const { return a.type == CUDA_R_8I; }
  double rate_flops_per_s() const;  // the stand-in's device speed for this kind of product
  std::uint64_t hash() const;
  cublasStatus_t refuse(cublasStatus_t s, const std::string& w) {
    status = s;
    why = w;
    return s;
  }
  cublasStatus_t check(const fake::Config& cfg);
};

// cublasLtMatmul "Datatypes Supported" (regular and FP8 tables).
bool types_supported(const Problem& p) {
  const auto A = p.a.type, B = p.b.type, C = p.c.type, D = p.d.type;
  const auto ct = p.desc.compute;
  const auto st = p.desc.scale;
  if (p.fp8()) {
    if (ct != CUBLAS_COMPUTE_32F || st != CUDA_R_32F) return false;  // "compute type must be 32F", "scale type 32F"
    const bool a8 = A == CUDA_R_8F_E4M3 || A == CUDA_R_8F_E5M2, b8 = B == CUDA_R_8F_E4M3 || B == CUDA_R_8F_E5M2;
    if (!a8 || !b8 || (A == CUDA_R_8F_E5M2 && B == CUDA_R_8F_E5M2)) return false;
    const bool e5 = A == CUDA_R_8F_E5M2 || B == CUDA_R_8F_E5M2;
    const bool d8 = D == CUDA_R_8F_E4M3 || (e5 && D == CUDA_R_8F_E5M2);
    if (C == CUDA_R_16BF) return D == CUDA_R_16BF || d8;
    if (C == CUDA_R_16F) return D == CUDA_R_16F || d8;
    return C == CUDA_R_32F && D == CUDA_R_32F;
  }
  if (C != D || A != B) return false;
  switch (ct) {
    case CUBLAS_COMPUTE_16F: case CUBLAS_COMPUTE_16F_PEDANTIC: return st == CUDA_R_16F && A == CUDA_R_16F && C == CUDA_R_16F;
    case CUBLAS_COMPUTE_32I: case CUBLAS_COMPUTE_32I_PEDANTIC:
      return A == CUDA_R_8I && ((st == CUDA_R_32I && C == CUDA_R_32I) || (st == CUDA_R_32F && C == CUDA_R_8I));
    case CUBLAS_COMPUTE_32F: case CUBLAS_COMPUTE_32F_PEDANTIC:
      if (st != CUDA_R_32F) return false;
      if (A == CUDA_R_16BF) return C == CUDA_R_16BF || C == CUDA_R_32F;
      if (A == CUDA_R_16F) return C == CUDA_R_16F || C == CUDA_R_32F;
      if (A == CUDA_R_8I) return C == CUDA_R_32F;
      return A == CUDA_R_32F && C == CUDA_R_32F;
    case CUBLAS_COMPUTE_32F_FAST_16F: case CUBLAS_COMPUTE_32F_FAST_16BF: case CUBLAS_COMPUTE_32F_FAST_TF32:
      return st == CUDA_R_32F && A == CUDA_R_32F && C == CUDA_R_32F;
    case CUBLAS_COMPUTE_64F: case CUBLAS_COMPUTE_64F_PEDANTIC: return st == CUDA_R_64F && A == CUDA_R_64F && C == CUDA_R_64F;
    default: return false;
  }
}

cublasStatus_t Problem::check(const fake::Config& cfg) {
  for (const Layout* l : {&a, &b, &c, &d}) {
    if (l->order != CUBLASLT_ORDER_COL) return refuse(CUBLAS_STATUS_NOT_SUPPORTED, "only CUBLASLT_ORDER_COL is implemented");
    if (l->rows == 0 || l->cols == 0 || l->ld < static_cast<std::int64_t>(l->rows))
      return refuse(CUBLAS_STATUS_INVALID_VALUE, "a leading dimension is smaller than the rows (CUBLASLT_MATRIX_LAYOUT_LD)");
  }
  const bool ta = desc.transa != CUBLAS_OP_N, tb = desc.transb != CUBLAS_OP_N;
  m = static_cast<std::int64_t>(ta ? a.cols : a.rows);
  k = static_cast<std::int64_t>(ta ? a.rows : a.cols);
  const auto kb = static_cast<std::int64_t>(tb ? b.cols : b.rows);
  n = static_cast<std::int64_t>(tb ? b.rows : b.cols);
  if (kb != k || static_cast<std::int64_t>(d.rows) != m || static_cast<std::int64_t>(d.cols) != n)
    return refuse(CUBLAS_STATUS_INVALID_VALUE, "op(A), op(B) and D do not chain: " + std::to_string(m) + "x" +
                                                   std::to_string(k) + " times " + std::to_string(kb) + "x" +
                                                   std::to_string(n) + " into " + std::to_string(d.rows) + "x" +
                                                   std::to_string(d.cols));
  if (c.rows != d.rows || c.cols != d.cols) return refuse(CUBLAS_STATUS_INVALID_VALUE, "C and D differ in shape");
  if (a.batch != d.batch || b.batch != d.batch || c.batch != d.batch)
    return refuse(CUBLAS_STATUS_INVALID_VALUE, "the batch counts of A, B, C and D differ");
  if (!types_supported(*this)) return refuse(CUBLAS_STATUS_NOT_SUPPORTED, "this combination of types is not in the supported table");
  const int cc = cfg.major * 10 + cfg.minor;
  if ((a.type == CUDA_R_16BF || desc.compute == CUBLAS_COMPUTE_32F_FAST_TF32) && cc < 80)
    return refuse(CUBLAS_STATUS_NOT_SUPPORTED, "bf16 and TF32 need compute capability 8.0");
  if (fp8()) {
    if (cc < 89) return refuse(CUBLAS_STATUS_NOT_SUPPORTED, "FP8 needs compute capability 8.9");
    // "A must be transposed and B non-transposed (The TN format)" on 8.9, 9.0 and 12.x.
    if ((cc == 89 || cc == 90 || cc / 10 == 12) && (!ta || tb)) return refuse(CUBLAS_STATUS_NOT_SUPPORTED, "FP8 needs the TN format");
    // "All matrix dimensions must meet the optimal requirements listed in Tensor Core Usage
    // (i.e. pointers and matrix dimension must support 16-byte alignment)".
    const std::int64_t cs = static_cast<std::int64_t>(fake::type_bytes(c.type));
    const bool aligned = m % 16 == 0 && n % 16 == 0 && k % 16 == 0 && (m * cs) % 16 == 0 && a.ld % 16 == 0 &&
                         b.ld % 16 == 0 && (c.ld * cs) % 16 == 0;
    if (!aligned) return refuse(CUBLAS_STATUS_NOT_SUPPORTED, "FP8 needs dimensions and leading dimensions on 16-byte boundaries");
  }
  if (imma()) {
    // IMMA with regular ordering: "Only the TN format", "Dimensions m and k must be multiples
    // of 4", "Leading dimensions of matrices A, B, C must be multiples of 4".
    if (!ta || tb) return refuse(CUBLAS_STATUS_NOT_SUPPORTED, "int8 IMMA needs the TN format");
    if (m % 4 || k % 4 || a.ld % 4 || b.ld % 4 || c.ld % 4)
      return refuse(CUBLAS_STATUS_NOT_SUPPORTED, "int8 IMMA needs m, k and the leading dimensions multiples of 4");
  }
  return CUBLAS_STATUS_SUCCESS;
}

// The stand-in's device speed (FLOP/s, 2 per multiply-add), documented in README.md.
double Problem::rate_flops_per_s() const {
  if (fp8() || imma()) return 1600e12;
  if (a.type == CUDA_R_16F || a.type == CUDA_R_16BF) return 800e12;
  if (desc.compute == CUBLAS_COMPUTE_32F_FAST_TF32 || desc.compute == CUBLAS_COMPUTE_32F_FAST_16F ||
      desc.compute == CUBLAS_COMPUTE_32F_FAST_16BF)
    return 400e12;
  if (a.type == CUDA_R_64F) return 60e12;
  return 50e12;
}

std::uint64_t Problem::hash() const {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](std::uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  mix(static_cast<std::uint64_t>(desc.compute)), mix(static_cast<std::uint64_t>(desc.scale));
  mix(desc.transa), mix(desc.transb);
  for (const Layout* l : {&a, &b, &c, &d})
    mix(static_cast<std::uint64_t>(l->type)), mix(l->rows), mix(l->cols), mix(static_cast<std::uint64_t>(l->ld)),
        mix(static_cast<std::uint64_t>(l->batch)), mix(static_cast<std::uint64_t>(l->stride));
  return h;
}

Problem problem(const Desc& desc, const Layout& a, const Layout& b, const Layout& c, const Layout& d) {
  Problem p;
  p.desc = desc, p.a = a, p.b = b, p.c = c, p.d = d;
  return p;
}

// Bytes an operand's layout spans, from its element 0.
std::size_t extent_bytes(const Layout& l) {
  const auto span = static_cast<std::size_t>((l.batch - 1) * l.stride + static_cast<std::int64_t>(l.cols - 1) * l.ld +
                                             static_cast<std::int64_t>(l.rows));
  return span * fake::type_bytes(l.type);
}

double read_scalar(cudaDataType_t t, const void* p) {
  if (t == CUDA_R_64F) return *static_cast<const double*>(p);
  if (t == CUDA_R_32I) return *static_cast<const std::int32_t*>(p);
  if (t == CUDA_R_16F) return static_cast<double>(*static_cast<const std::uint16_t*>(p));  // not used by napkin
  return *static_cast<const float*>(p);
}

}  // namespace

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  Call c("cublasLtCreate");
  if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
  if (c.st.config.no_driver || c.st.config.old_driver || c.st.config.no_device) return CUBLAS_STATUS_NOT_INITIALIZED;
  auto* h = new int(0);
  c.st.lt_handles.insert(h);
  ++c.st.live.lt_handles;
  *handle = reinterpret_cast<cublasLtHandle_t>(h);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  if (!handle) {
    Call c("cublasLtDestroy");
    return CUBLAS_STATUS_NOT_INITIALIZED;  // "if the cuBLASLt handle was not initialized"
  }
  return destroy<int>("cublasLtDestroy", &State::lt_handles, &fake::Counters::lt_handles, handle);
}

const char* cublasLtGetStatusString(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "the operation completed successfully";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid value was used as an argument";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "an absent device architectural feature is required";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    default: return "unknown cuBLAS status";
  }
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute, cudaDataType_t scale) {
  Call c("cublasLtMatmulDescCreate");
  if (!desc) return CUBLAS_STATUS_INVALID_VALUE;
  auto* d = new Desc{compute, scale};
  c.st.descs.insert(d);
  ++c.st.live.matmul_descs;
  *desc = reinterpret_cast<cublasLtMatmulDesc_t>(d);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  return destroy<Desc>("cublasLtMatmulDescDestroy", &State::descs, &fake::Counters::matmul_descs, desc);
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const void* buf,
                                              size_t size) {
  Call c("cublasLtMatmulDescSetAttribute");
  Desc* d = live<Desc>(c.st, c.st.descs, desc, "cublasLtMatmulDescSetAttribute", "the matmul descriptor");
  if (!d) return CUBLAS_STATUS_INVALID_VALUE;
  std::int32_t i32 = 0;
  bool ok = false;
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_TRANSA: ok = take(buf, size, i32), d->transa = static_cast<cublasOperation_t>(i32); break;
    case CUBLASLT_MATMUL_DESC_TRANSB: ok = take(buf, size, i32), d->transb = static_cast<cublasOperation_t>(i32); break;
    case CUBLASLT_MATMUL_DESC_POINTER_MODE: ok = take(buf, size, d->pointer_mode); break;
    case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER: ok = take(buf, size, d->a_scale); break;
    case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER: ok = take(buf, size, d->b_scale); break;
    case CUBLASLT_MATMUL_DESC_D_SCALE_POINTER: ok = take(buf, size, d->d_scale); break;
    default:
      c.st.violation("cublasLtMatmulDescSetAttribute: attribute " + std::to_string(attr) + " is not implemented by the stand-in");
      return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (ok && d->pointer_mode != CUBLASLT_POINTER_MODE_HOST) {
    c.st.violation("cublasLtMatmulDescSetAttribute: only CUBLASLT_POINTER_MODE_HOST is implemented");
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (ok && (d->transa > CUBLAS_OP_C || d->transb > CUBLAS_OP_C)) ok = false;
  return ok ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows, uint64_t cols,
                                          int64_t ld) {
  Call c("cublasLtMatrixLayoutCreate");
  if (!layout || fake::type_bytes(type) == 0) return CUBLAS_STATUS_INVALID_VALUE;
  auto* l = new Layout{type, rows, cols, ld};
  c.st.layouts.insert(l);
  ++c.st.live.layouts;
  *layout = reinterpret_cast<cublasLtMatrixLayout_t>(l);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  return destroy<Layout>("cublasLtMatrixLayoutDestroy", &State::layouts, &fake::Counters::layouts, layout);
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
                                                const void* buf, size_t size) {
  Call c("cublasLtMatrixLayoutSetAttribute");
  Layout* l = live<Layout>(c.st, c.st.layouts, layout, "cublasLtMatrixLayoutSetAttribute", "the layout");
  if (!l) return CUBLAS_STATUS_INVALID_VALUE;
  bool ok = false;
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_ORDER: ok = take(buf, size, l->order); break;
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: ok = take(buf, size, l->batch) && l->batch >= 1; break;
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: ok = take(buf, size, l->stride); break;
    default:
      c.st.violation("cublasLtMatrixLayoutSetAttribute: attribute " + std::to_string(attr) + " is not implemented by the stand-in");
      return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  return ok ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  Call c("cublasLtMatmulPreferenceCreate");
  if (!pref) return CUBLAS_STATUS_INVALID_VALUE;
  auto* p = new Pref{};
  c.st.prefs.insert(p);
  ++c.st.live.preferences;
  *pref = reinterpret_cast<cublasLtMatmulPreference_t>(p);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  return destroy<Pref>("cublasLtMatmulPreferenceDestroy", &State::prefs, &fake::Counters::preferences, pref);
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void* buf, size_t size) {
  Call c("cublasLtMatmulPreferenceSetAttribute");
  Pref* p = live<Pref>(c.st, c.st.prefs, pref, "cublasLtMatmulPreferenceSetAttribute", "the preference");
  if (!p) return CUBLAS_STATUS_INVALID_VALUE;
  if (attr != CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES) {
    c.st.violation("cublasLtMatmulPreferenceSetAttribute: attribute " + std::to_string(attr) + " is not implemented");
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  return take(buf, size, p->max_workspace) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t A,
                                              cublasLtMatrixLayout_t B, cublasLtMatrixLayout_t C, cublasLtMatrixLayout_t D,
                                              cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int* returned) {
  Call c("cublasLtMatmulAlgoGetHeuristic");
  const char* call = "cublasLtMatmulAlgoGetHeuristic";
  if (!live<int>(c.st, c.st.lt_handles, handle, call, "the handle")) return CUBLAS_STATUS_NOT_INITIALIZED;
  Desc* d = live<Desc>(c.st, c.st.descs, desc, call, "the matmul descriptor");
  Layout *a = live<Layout>(c.st, c.st.layouts, A, call, "Adesc"), *b = live<Layout>(c.st, c.st.layouts, B, call, "Bdesc"),
         *cl = live<Layout>(c.st, c.st.layouts, C, call, "Cdesc"), *dl = live<Layout>(c.st, c.st.layouts, D, call, "Ddesc");
  Pref* p = live<Pref>(c.st, c.st.prefs, pref, call, "the preference");
  if (!d || !a || !b || !cl || !dl || !p || !results || !returned) return CUBLAS_STATUS_INVALID_VALUE;
  if (requested <= 0) return CUBLAS_STATUS_INVALID_VALUE;  // "if requestedAlgoCount is less or equal to zero"
  *returned = 0;
  Problem pr = problem(*d, *a, *b, *cl, *dl);
  if (const auto s = pr.check(c.st.config); s != CUBLAS_STATUS_SUCCESS) return s;
  // Up to 8 candidates; candidate i needs i x 4 MiB of workspace and runs (1 + i/4) times as
  // long as the first (README.md). Only those that fit the workspace limit are returned.
  int n = 0;
  for (int i = 0; i < 8 && n < requested; ++i) {
    const std::size_t ws = workspace_step * static_cast<std::size_t>(i);
    if (ws > p->max_workspace) break;
    cublasLtMatmulHeuristicResult_t& r = results[n++];
    std::memset(&r, 0, sizeof r);
    r.algo.data[0] = algo_magic;
    r.algo.data[1] = static_cast<std::uint64_t>(i);
    r.algo.data[2] = pr.hash();
    r.algo.data[3] = ws;
    r.workspaceSize = ws;
    r.wavesCount = 1.0f;
    r.state = i < c.st.config.bad_state ? CUBLAS_STATUS_NOT_SUPPORTED : CUBLAS_STATUS_SUCCESS;  // injected
  }
  *returned = n;
  return n > 0 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}

cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t* algo, cublasLtMatmulAlgoConfigAttributes_t attr,
                                                    void* buf, size_t size, size_t* written) {
  Call c("cublasLtMatmulAlgoConfigGetAttribute");
  if (!algo || algo->data[0] != algo_magic) return CUBLAS_STATUS_INVALID_VALUE;
  const auto i = static_cast<std::int32_t>(algo->data[1]);
  std::uint32_t value = 0;
  switch (attr) {
    case CUBLASLT_ALGO_CONFIG_ID: value = static_cast<std::uint32_t>(100 + i); break;  // int32_t
    case CUBLASLT_ALGO_CONFIG_TILE_ID: value = static_cast<std::uint32_t>(20 + i); break;  // uint32_t
    case CUBLASLT_ALGO_CONFIG_SPLITK_NUM: value = 1; break;  // int32_t
    case CUBLASLT_ALGO_CONFIG_STAGES_ID: value = 8; break;   // uint32_t
    default: return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (size == 0) {
    if (!written) return CUBLAS_STATUS_INVALID_VALUE;
    *written = 4;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (!buf || size != 4) return CUBLAS_STATUS_INVALID_VALUE;  // all four attributes are 32-bit
  std::memcpy(buf, &value, 4);
  if (written) *written = 4;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha, const void* A,
                              cublasLtMatrixLayout_t Adesc, const void* B, cublasLtMatrixLayout_t Bdesc, const void* beta,
                              const void* C, cublasLtMatrixLayout_t Cdesc, void* D, cublasLtMatrixLayout_t Ddesc,
                              const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspace_bytes, cudaStream_t stream) {
  Call c("cublasLtMatmul");
  State& st = c.st;
  const char* call = "cublasLtMatmul";
  if (!live<int>(st, st.lt_handles, handle, call, "the handle")) return CUBLAS_STATUS_NOT_INITIALIZED;
  Desc* dsc = live<Desc>(st, st.descs, desc, call, "the matmul descriptor");
  Layout *al = live<Layout>(st, st.layouts, Adesc, call, "Adesc"), *bl = live<Layout>(st, st.layouts, Bdesc, call, "Bdesc"),
         *cl = live<Layout>(st, st.layouts, Cdesc, call, "Cdesc"), *dl = live<Layout>(st, st.layouts, Ddesc, call, "Ddesc");
  if (!dsc || !al || !bl || !cl || !dl || !alpha || !beta || !A || !B || !D) return CUBLAS_STATUS_INVALID_VALUE;
  Problem pr = problem(*dsc, *al, *bl, *cl, *dl);
  if (const auto s = pr.check(st.config); s != CUBLAS_STATUS_SUCCESS) {
    st.violation(std::string(call) + ": " + pr.why);
    return s;
  }
  // In place needs C == D with the same layout ("C == D and Cdesc == Ddesc").
  if (C == D && !(*cl == *dl)) return CUBLAS_STATUS_INVALID_VALUE;
  if (!algo) {
    st.violation("cublasLtMatmul: no algo (napkin always passes the heuristic's)");
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (algo->data[0] != algo_magic || algo->data[2] != pr.hash()) {
    st.violation("cublasLtMatmul: the algo was not returned by the heuristic for this problem");
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  const auto candidate = static_cast<int>(algo->data[1]);
  if (workspace_bytes < algo->data[3]) return CUBLAS_STATUS_INVALID_VALUE;  // "less than workspace required by the algo"
  fake::Stream* s = st.stream(stream, call);
  if (!s) return CUBLAS_STATUS_INVALID_VALUE;
  // Host pointer mode: alpha and beta are host values of the scale type.
  if (st.is_device_pointer(alpha) || st.is_device_pointer(beta)) {
    st.violation("cublasLtMatmul: alpha/beta are device pointers under CUBLASLT_POINTER_MODE_HOST");
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  const double alpha_v = read_scalar(pr.desc.scale, alpha), beta_v = read_scalar(pr.desc.scale, beta);
  const bool needs_c = beta_v != 0;
  if (needs_c) {
    st.violation("cublasLtMatmul: beta != 0 is not implemented by the stand-in");
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  // The operands must lie in live device memory, aligned as the kernels need.
  const std::size_t align = pr.fp8() ? 16 : pr.imma() ? 4 : fake::type_bytes(pr.a.type);
  fake::Alloc* aa = st.find(A, extent_bytes(*al), call, "A");
  fake::Alloc* ba = st.find(B, extent_bytes(*bl), call, "B");
  fake::Alloc* da = st.find(D, extent_bytes(*dl), call, "D");
  if (!aa || !ba || !da) return CUBLAS_STATUS_INVALID_VALUE;
  for (const void* p : {A, B, static_cast<const void*>(D)})
    if (reinterpret_cast<std::uintptr_t>(p) % align) return CUBLAS_STATUS_INVALID_VALUE;
  if (da == aa || da == ba) {
    st.violation("cublasLtMatmul: D overlaps A or B");
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  fake::Alloc* wa = nullptr;
  if (workspace_bytes > 0) {
    if (reinterpret_cast<std::uintptr_t>(workspace) % 256) return CUBLAS_STATUS_INVALID_VALUE;  // "Must be 256B aligned"
    if (!(wa = st.find(workspace, workspace_bytes, call, "the workspace"))) return CUBLAS_STATUS_INVALID_VALUE;
  }
  // FP8 per-tensor scales: device pointers to fp32, 1 when unset.
  double scale_ab = 1, scale_d = 1;
  std::vector<fake::Alloc*> scale_allocs;
  for (const void* ptr : {pr.desc.a_scale, pr.desc.b_scale, pr.desc.d_scale}) {
    if (!ptr) continue;
    fake::Alloc* sa = st.find(ptr, sizeof(float), call, "a scale pointer");
    if (!sa) return CUBLAS_STATUS_INVALID_VALUE;
    scale_allocs.push_back(sa);
  }
  if (candidate < st.config.matmul_fails) return CUBLAS_STATUS_EXECUTION_FAILED;  // injected

  // Issue it: reads A, B and the scales, writes D and the workspace, all on `s`.
  const double flops = 2.0 * static_cast<double>(pr.m) * static_cast<double>(pr.n) * static_cast<double>(pr.k) *
                       static_cast<double>(pr.d.batch);
  const double duration = (2e-6 + flops / pr.rate_flops_per_s()) * (1 + 0.25 * candidate);
  const std::uint64_t q = st.issue(*s, duration);
  bool ok = st.access(*aa, *s, q, false, call, "A") && st.access(*ba, *s, q, false, call, "B");
  for (fake::Alloc* sa : scale_allocs) ok = ok && st.access(*sa, *s, q, false, call, "a scale");
  ok = ok && st.access(*da, *s, q, true, call, "D") && (!wa || st.access(*wa, *s, q, true, call, "the workspace"));
  if (!ok) return CUBLAS_STATUS_EXECUTION_FAILED;

  const std::size_t a_off = reinterpret_cast<std::uintptr_t>(A) - aa->base, b_off = reinterpret_cast<std::uintptr_t>(B) - ba->base;
  auto written = [&](fake::Alloc& al2, std::size_t off, const Layout& l) {
    return al2.written.covers(off, off + extent_bytes(l));  // a strided layout with gaps is checked by its span
  };
  if (!written(*aa, a_off, *al) || !written(*ba, b_off, *bl)) {
    st.violation("cublasLtMatmul: reads A or B bytes that nothing wrote");
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }
  // Scale values are read now: a write racing them was caught above.
  auto scale_value = [&](const void* ptr) {
    float f = 1;
    fake::Alloc* sa = st.find(ptr, sizeof f, call, "a scale pointer");
    st.read(*sa, reinterpret_cast<std::uintptr_t>(ptr) - sa->base, &f, sizeof f, call);
    return static_cast<double>(f);
  };
  if (pr.desc.a_scale) scale_ab *= scale_value(pr.desc.a_scale);
  if (pr.desc.b_scale) scale_ab *= scale_value(pr.desc.b_scale);
  if (pr.desc.d_scale) scale_d = scale_value(pr.desc.d_scale);

  auto p = std::make_shared<fake::Deferred>();
  p->compute_type = pr.desc.compute;
  p->scale = pr.desc.scale;
  p->m = pr.m, p->n = pr.n, p->k = pr.k, p->batch = pr.d.batch;
  // With the TRANSA fault the stand-in reads A as if TRANSA were N: a wrong product that
  // napkin's correctness check must refuse.
  p->a = {pr.a.type, pr.desc.transa != CUBLAS_OP_N && !st.config.ignore_transa, pr.a.ld, pr.a.stride, nullptr, 0, {}};
  p->b = {pr.b.type, pr.desc.transb != CUBLAS_OP_N, pr.b.ld, pr.b.stride, nullptr, 0, {}};
  p->d_type = pr.d.type;
  p->ldd = pr.d.ld, p->stride_d = pr.d.stride;
  p->d = da;
  p->d_off = reinterpret_cast<std::uintptr_t>(D) - da->base;
  p->alpha = alpha_v, p->scale_ab = scale_ab, p->scale_d = scale_d;
  p->key = std::to_string(pr.hash()) + ":" + std::to_string(a_off) + ":" + std::to_string(aa->serial) + "v" +
           std::to_string(aa->version) + ":" + std::to_string(b_off) + ":" + std::to_string(ba->serial) + "v" +
           std::to_string(ba->version) + ":" + std::to_string(p->d_off) + ":" + std::to_string(alpha_v) + ":" +
           std::to_string(scale_ab) + ":" + std::to_string(scale_d) + ":" + (st.config.ignore_transa ? "i" : "");
  // The same product into the same D, with nothing changed since: D already holds it.
  if (da->deferred && da->deferred->key == p->key && da->written.covers(p->d_off, p->d_off + extent_bytes(*dl))) return CUBLAS_STATUS_SUCCESS;
  fake::settle_writer(st, *da, p->d_off, extent_bytes(*dl), true);
  // The inputs as they are now (a later write copies before it changes them).
  p->a.data = st.materialize(*aa) + a_off;
  p->a.bytes = aa->size - a_off;
  p->a.keep = aa->bytes;
  p->b.data = st.materialize(*ba) + b_off;
  p->b.bytes = ba->size - b_off;
  p->b.keep = ba->bytes;
  p->done.assign(p->entries(), false);
  da->deferred = p;
  da->written.add(p->d_off, p->d_off + extent_bytes(*dl));
  ++da->version;
  return CUBLAS_STATUS_SUCCESS;
}
