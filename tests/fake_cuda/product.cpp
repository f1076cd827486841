#include "product.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace fake {
namespace {

template <typename T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// TF32 keeps fp32's exponent and 10 mantissa bits. With CUBLAS_COMPUTE_32F_FAST_TF32 the
// inputs are rounded to it (cublasComputeType_t: "allows the library to use Tensor Cores with
// TF32 compute for 32-bit input and output matrices"); PTX cvt.rna.tf32.f32 rounds to
// nearest, ties away from zero: add half of the dropped 13 bits to the magnitude, truncate.
float to_tf32(float x) {
  if (!std::isfinite(x)) return x;
  return std::bit_cast<float>((std::bit_cast<std::uint32_t>(x) + 0x1000u) & 0xFFFFE000u);
}

// One stored element as the compute type sees it. NVIDIA's own host conversions
// (cuda_fp16.h, cuda_bf16.h, cuda_fp8.h), not napkin's.
double element(cudaDataType_t type, const unsigned char* p, bool tf32) {
  switch (type) {
    case CUDA_R_64F: return load<double>(p);
    case CUDA_R_32F: {
      const float f = load<float>(p);
      return tf32 ? to_tf32(f) : f;
    }
    case CUDA_R_16F: {
      __half_raw r;
      r.x = load<unsigned short>(p);
      return __half2float(__half(r));
    }
    case CUDA_R_16BF: {
      __nv_bfloat16_raw r;
      r.x = load<unsigned short>(p);
      return __bfloat162float(__nv_bfloat16(r));
    }
    case CUDA_R_8F_E4M3: return __half2float(__half(__nv_cvt_fp8_to_halfraw(*p, __NV_E4M3)));
    case CUDA_R_8F_E5M2: return __half2float(__half(__nv_cvt_fp8_to_halfraw(*p, __NV_E5M2)));
    case CUDA_R_8I: return static_cast<signed char>(*p);
    case CUDA_R_32I: return load<std::int32_t>(p);
    default: return std::nan("");
  }
}

void store(cudaDataType_t type, unsigned char* p, double v) {
  switch (type) {
    case CUDA_R_64F: std::memcpy(p, &v, 8); break;
    case CUDA_R_32F: {
      const float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      break;
    }
    case CUDA_R_16F: {
      const __half_raw r = __half_raw(__float2half_rn(static_cast<float>(v)));
      std::memcpy(p, &r.x, 2);
      break;
    }
    case CUDA_R_16BF: {
      const __nv_bfloat16_raw r = __nv_bfloat16_raw(__float2bfloat16_rn(static_cast<float>(v)));
      std::memcpy(p, &r.x, 2);
      break;
    }
    case CUDA_R_8F_E4M3: *p = __nv_cvt_float_to_fp8(static_cast<float>(v), __NV_SATFINITE, __NV_E4M3); break;
    case CUDA_R_8F_E5M2: *p = __nv_cvt_float_to_fp8(static_cast<float>(v), __NV_SATFINITE, __NV_E5M2); break;
    case CUDA_R_8I: *p = static_cast<unsigned char>(static_cast<signed char>(std::clamp(std::nearbyint(v), -128.0, 127.0))); break;
    case CUDA_R_32I: {
      // IMMA accumulates in 32-bit integers; a sum that leaves int32 wraps.
      const auto i = static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::int64_t>(v)));
      std::memcpy(p, &i, 4);
      break;
    }
    default: break;
  }
}

}  // namespace

std::size_t type_bytes(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_64F: return 8;
    case CUDA_R_32F: case CUDA_R_32I: return 4;
    case CUDA_R_16F: case CUDA_R_16BF: return 2;
    case CUDA_R_8F_E4M3: case CUDA_R_8F_E5M2: case CUDA_R_8I: return 1;
    default: return 0;
  }
}

void Deferred::compute(std::size_t entry) {
  if (done[entry]) return;
  done[entry] = true;
  const auto e = static_cast<std::int64_t>(entry);
  const std::int64_t bm = e / (m * n), r = e % (m * n), j = r / m, i = r % m;
  const std::size_t as = type_bytes(a.type), bs = type_bytes(b.type);
  const bool tf32 = compute_type == CUBLAS_COMPUTE_32F_FAST_TF32;
  // op(A)(i, p): A is m x k, or stored k x m and transposed. op(B)(p, j) likewise.
  // Outside the allocation (only a misread layout gets there) reads as NaN.
  auto at = [&](const Operand& o, std::size_t size, std::int64_t idx) {
    const auto off = static_cast<std::size_t>(idx) * size;
    return idx >= 0 && off + size <= o.bytes ? element(o.type, o.data + off, tf32) : std::nan("");
  };
  auto a_at = [&](std::int64_t p) { return at(a, as, bm * a.stride + (a.transposed ? p + i * a.ld : i + p * a.ld)); };
  auto b_at = [&](std::int64_t p) { return at(b, bs, bm * b.stride + (b.transposed ? j + p * b.ld : p + j * b.ld)); };
  double result = 0;
  if (compute_type == CUBLAS_COMPUTE_64F || compute_type == CUBLAS_COMPUTE_64F_PEDANTIC) {
    double acc = 0;
    for (std::int64_t p = 0; p < k; ++p) acc = std::fma(a_at(p), b_at(p), acc);
    result = alpha * acc;
  } else if (compute_type == CUBLAS_COMPUTE_32I || compute_type == CUBLAS_COMPUTE_32I_PEDANTIC) {
    std::int64_t acc = 0;
    bool misread = false;
    for (std::int64_t p = 0; p < k && !misread; ++p) {
      const double x = a_at(p), y = b_at(p);
      misread = !std::isfinite(x) || !std::isfinite(y);
      if (!misread) acc += static_cast<std::int64_t>(x) * static_cast<std::int64_t>(y);
    }
    result = misread ? -2147483648.0 : static_cast<double>(static_cast<std::int32_t>(static_cast<std::uint32_t>(acc))) * alpha;
  } else {  // fp32 accumulation, as every 16-bit, TF32 and FP8 kernel does
    float acc = 0;
    for (std::int64_t p = 0; p < k; ++p) acc = std::fma(static_cast<float>(a_at(p)), static_cast<float>(b_at(p)), acc);
    result = static_cast<double>(static_cast<float>(alpha * scale_ab) * acc) * scale_d;
  }
  const std::size_t ds = type_bytes(d_type);
  const std::int64_t d_idx = bm * stride_d + i + j * ldd;
  store(d_type, State::writable(*d) + d_off + static_cast<std::size_t>(d_idx) * ds, result);
}

void Deferred::compute_all() {
  if (settled) return;
  for (std::size_t e = 0; e < entries(); ++e) compute(e);
  settled = true;
}

// A read of [off, off + n) of D computes the entries it overlaps; a write computes them all
// first, unless it overwrites the whole product (then the pending product is dropped).
void settle_writer(State&, Alloc& a, std::size_t off, std::size_t n, bool write) {
  const std::shared_ptr<Deferred> p = a.deferred;
  if (!p) return;
  const std::size_t ds = type_bytes(p->d_type);
  const std::size_t first = p->d_off;
  const std::size_t last = p->d_off + static_cast<std::size_t>((p->batch - 1) * p->stride_d + (p->n - 1) * p->ldd + p->m) * ds;
  if (write) {
    if (!(off <= first && last <= off + n)) p->compute_all();
    a.deferred.reset();
    return;
  }
  if (off <= first && last <= off + n) {
    p->compute_all();
    return;
  }
  // Entries whose bytes overlap the range.
  const std::size_t lo = off > first ? (off - first) / ds : 0;
  const std::size_t hi = std::min(last, off + n) > first ? (std::min(last, off + n) - first + ds - 1) / ds : 0;
  for (std::size_t rel = lo; rel < hi; ++rel) {
    const auto r = static_cast<std::int64_t>(rel);
    const std::int64_t bm = p->stride_d ? r / p->stride_d : 0, in_batch = p->stride_d ? r % p->stride_d : r;
    const std::int64_t j = in_batch / p->ldd, i = in_batch % p->ldd;
    if (bm < p->batch && j < p->n && i < p->m) p->compute(static_cast<std::size_t>((bm * p->n + j) * p->m + i));
  }
}

}  // namespace fake
