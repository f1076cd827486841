// The napkin binary through the CPU stand-in (NAPKIN_CUDA_MODULE=libnapkin_cuda_fake.so): every
// dtype, a sweep, a batch, calibrate, every fault, Ctrl-C. Expected values are hand
// arithmetic: FLOPs 2mnk; times from the stand-in's documented device model (README.md:
// (2 us + 2mnk·batch / rate) × (1 + i/4) for heuristic candidate i); peaks from the H100
// datasheet (hardware/h100-sxm.toml); errors from the documented reasons. Each run must
// leave nothing alive in the stand-in and no violation of the CUDA contract.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "bench_signal.hpp"
#include "cli_helpers.hpp"

using napkin::test::CliResult;
using napkin::test::run_napkin;
using napkin::test::TempDir;
using nlohmann::json;

namespace {

struct FakeRun {
  CliResult r;
  json report;  // NAPKIN_FAKE_CUDA_REPORT
};

// napkin with the stand-in; `faults` as NAPKIN_FAKE_CUDA_FAULTS. Checks the run left no
// live object and broke no rule of the CUDA API.
FakeRun fake(const std::string& args, const std::string& faults = "", const std::string& env = "", bool loads_module = true) {
  TempDir dir("napkin_fake_cli");
  const std::string report = (dir / "report.json").string();
  FakeRun f;
  // Under the sanitizers: GCC 12's LeakSanitizer, walking glibc 2.36's dynamic TLS at exit after
  // the stand-in's dlopen, reads a stale block and its tracer dies ("Tracer caught signal 11",
  // train --mfu calibrated). use_tls=0 only drops TLS as a root set: a block reachable from TLS
  // alone is reported as a leak, never hidden, so leak checking stays on; glibc's own TLS blocks
  // then match LSan's built-in *tls_get_addr* suppression, whose summary print_suppressions=0
  // keeps off stderr (the tests compare stderr exactly).
  f.r = run_napkin(args, "LSAN_OPTIONS=use_tls=0:print_suppressions=0 NAPKIN_CUDA_MODULE='" NAPKIN_FAKE_CUDA_MODULE "' NAPKIN_FAKE_CUDA_REPORT='" + report +
                             "' NAPKIN_FAKE_CUDA_FAULTS='" + faults + "' " + env);
  const std::string text = napkin::test::slurp(report);
  INFO(args, " [", faults, "] -> ", f.r.err);
  if (!loads_module) {  // bad input is refused before any device work
    CHECK(text.empty());
    return f;
  }
  REQUIRE_MESSAGE(!text.empty(), "the stand-in wrote no report");
  f.report = json::parse(text);
  for (const auto& [what, n] : f.report["live"].items()) CHECK_MESSAGE(n.get<long>() == 0, what << " left alive");
  CHECK_MESSAGE(f.report["violations"].empty(), f.report["violations"].dump());
  return f;
}

// One line on stderr, "napkin: error: <message>", and the exit status.
void expect_error(const FakeRun& f, int status, const std::string& message) {
  CHECK(f.r.exit_code == status);
  CHECK(f.r.out.empty());
  CHECK(f.r.err == "napkin: error: " + message + "\n");
}

// The stand-in's device time of one product of candidate `i` (README.md).
double product_s(double m, double n, double k, double rate, int candidate = 0, double batch = 1) {
  return (2e-6 + 2 * m * n * k * batch / rate) * (1 + 0.25 * candidate);
}

}  // namespace

TEST_CASE("bench --device cuda: every dtype on shapes that are and are not multiples of 16") {
  // Rates of the stand-in (README.md), peaks of h100-sxm.toml (dense, TFLOP/s x 1e12).
  struct Dt {
    const char* name;
    double rate, peak;
  };
  for (const Dt d : {Dt{"fp64", 60e12, 67e12},  // fp64_tensor: DGEMM runs on the FP64 tensor cores
                     Dt{"fp32", 50e12, 67e12}, Dt{"tf32", 400e12, 494.5e12}, Dt{"fp16", 800e12, 989.5e12},
                     Dt{"bf16", 800e12, 989.5e12}, Dt{"fp8", 1600e12, 1979e12}, Dt{"int8", 1600e12, 1979e12}})
    for (auto [m, n, k] : {std::tuple{64, 48, 80}, std::tuple{33, 17, 45}, std::tuple{36, 20, 44}}) {
      const std::string shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
      CAPTURE(d.name);
      CAPTURE(shape);
      const auto f = fake("bench --device cuda --dtype " + std::string(d.name) + " --shape " + shape + " --iters 3 --warmup 0 --json");
      const bool fp8_ok = m % 16 == 0 && n % 16 == 0 && k % 16 == 0, int8_ok = m % 4 == 0 && k % 4 == 0;
      if (std::string(d.name) == "fp8" && !fp8_ok) {
        expect_error(f, 2, "cuBLASLt has no fp8 algorithm for " + shape + " (FP8 needs M, N and K multiples of 16)");
        continue;
      }
      if (std::string(d.name) == "int8" && !int8_ok) {
        expect_error(f, 2, "cuBLASLt has no int8 algorithm for " + shape + " (int8 needs M and K multiples of 4)");
        continue;
      }
      REQUIRE_MESSAGE(f.r.exit_code == 0, f.r.err);
      const json j = json::parse(f.r.out);
      CHECK(j["device"]["backend"] == "cuda");
      CHECK(j["device"]["name"] == "NVIDIA H100 80GB HBM3");
      CHECK(j["device"]["description"] == "NVIDIA H100 80GB HBM3 (compute capability 9.0, 80.00 GiB)");
      CHECK(j["hardware"] == "h100-sxm");
      CHECK(j["peak_flops_per_s"].get<double>() == d.peak);
      const json& r = j["results"][0];
      CHECK(r["m"] == m);
      CHECK(r["batch"] == 1);
      CHECK(r["iterations"] == 3);
      CHECK(r["check"]["ok"] == true);
      CHECK(r["algorithm"].get<std::string>().rfind("cuBLASLt #1 of 4 (algo 100 ", 0) == 0);
      const double flops = 2.0 * m * n * k, t = product_s(m, n, k, d.rate);
      CHECK(r["flops"].get<double>() == flops);
      CHECK(r["time_s_median"].get<double>() == doctest::Approx(t).epsilon(1e-6));
      CHECK(r["flops_per_s_median"].get<double>() == doctest::Approx(flops / t).epsilon(1e-6));
      CHECK(r["mfu"].get<double>() == doctest::Approx(flops / t / d.peak).epsilon(1e-6));
      // NVML through the stand-in: 1980 MHz, 650 W, 55 C.
      CHECK(r["sm_clock_mhz"] == 1980);
      CHECK(r["power_watts"] == 650);
      CHECK(r["temperature_c"] == 55);
      if (std::string(d.name) == "int8") CHECK(r["check"]["max_error"] == 0);
    }
}

TEST_CASE("fp64 MFU is against fp64_tensor on an H100 and against fp64 on a V100") {
  auto f = fake("bench --device cuda --dtype fp64 --shape 64 --iters 2 --warmup 0 --json");
  REQUIRE(f.r.exit_code == 0);
  json j = json::parse(f.r.out);
  CHECK(j["peak_source"].get<std::string>().find("fp64_tensor dense") != std::string::npos);
  CHECK(j["results"][0]["mfu"].get<double>() <= 1);
  // A V100 (compute capability 7.0) has no FP64 tensor cores: its fp64 peak, 7.8 TFLOP/s.
  f = fake("bench --device cuda --dtype fp64 --shape 64 --iters 2 --warmup 0 --json", "",
           "NAPKIN_FAKE_CUDA_CC=7.0 NAPKIN_FAKE_CUDA_NAME='Tesla V100-SXM2-32GB'");
  REQUIRE(f.r.exit_code == 0);
  j = json::parse(f.r.out);
  CHECK(j["hardware"] == "v100-sxm");
  CHECK(j["peak_flops_per_s"].get<double>() == 7.8e12);
  f = fake("bench --device cuda --dtype bf16 --shape 64 --iters 2 --warmup 0", "",
           "NAPKIN_FAKE_CUDA_CC=7.0 NAPKIN_FAKE_CUDA_NAME='Tesla V100-SXM2-32GB'");
  CHECK(f.r.exit_code == 2);
  CHECK(f.r.err.find("has no bf16 matmul in napkin's cuda backend") != std::string::npos);
}

TEST_CASE("a short sweep and a batch") {
  auto f = fake("bench --device cuda --sweep m=16:48:16,n=32,k=16 --iters 2 --warmup 0 --json");
  REQUIRE(f.r.exit_code == 0);
  json j = json::parse(f.r.out);
  REQUIRE(j["results"].size() == 3);
  for (int i = 0; i < 3; ++i) {
    const double m = 16.0 * (i + 1);
    CHECK(j["results"][i]["m"] == 16 * (i + 1));
    CHECK(j["results"][i]["time_s_median"].get<double>() == doctest::Approx(product_s(m, 32, 16, 800e12)).epsilon(1e-6));
  }
  CHECK(j["best"] == 2);  // the fixed 2 us per product weighs least on the largest
  // 6 products of 32x24x40 in one strided-batched call: 6 x 2·32·24·40 FLOPs.
  f = fake("bench --device cuda --shape 32x24x40 --batch 6 --iters 2 --warmup 0 --json");
  REQUIRE(f.r.exit_code == 0);
  j = json::parse(f.r.out);
  CHECK(j["results"][0]["batch"] == 6);
  CHECK(j["results"][0]["flops"].get<double>() == 6 * 2.0 * 32 * 24 * 40);
  CHECK(j["results"][0]["time_s_median"].get<double>() == doctest::Approx(product_s(32, 24, 40, 800e12, 0, 6)).epsilon(1e-6));
}

TEST_CASE("calibrate --device cuda times gpt2's step as hand arithmetic says") {
  const auto f = fake("calibrate --model gpt2 --device cuda --seq 32 --iters 2 --warmup 0 --json");
  REQUIRE_MESSAGE(f.r.exit_code == 0, f.r.err);
  const json j = json::parse(f.r.out);
  CHECK(j["device"]["name"] == "NVIDIA H100 80GB HBM3");
  CHECK(j["seq_len"] == 32);
  CHECK(j["peak_flops_per_s"].get<double>() == 989.5e12);
  REQUIRE(j["products"].size() == 27);
  // Each product's time is its calls' device time: count x useful fraction x (2 us + its
  // dense FLOPs / 800 TFLOP/s), the batched attention products as one call each.
  for (const auto& p : j["products"]) {
    const double call = product_s(p["m"], p["n"], p["k"], 800e12, 0, p["batch"]);
    CHECK(p["time_per_call_s"].get<double>() == doctest::Approx(call).epsilon(1e-6));
  }
  // The step: gpt2 (12 layers) runs 6 weight products x 12 + 2 attention products x 12 at a
  // useful half + the LM head = 85 weighted calls forward, twice that backward: 255 x 2 us;
  // plus its useful FLOPs, 23,774,773,248 (test_cli_calibrate.cpp), at 800 TFLOP/s.
  const double step = 255 * 2e-6 + 23774773248.0 / 800e12;
  CHECK(j["step_matmul_time_s"].get<double>() == doctest::Approx(step).epsilon(1e-5));
  // MFU as napkin train counts FLOPs: 6·124,439,808 + 1,769,472 (causal attention at seq 32)
  // = 748,408,320 per token, 32 tokens per step, on a 989.5 TFLOP/s peak.
  CHECK(j["mfu"].get<double>() == doctest::Approx(748408320.0 * 32 / step / 989.5e12).epsilon(1e-5));
}

TEST_CASE("train --mfu calibrated through the stand-in, capped with --iters") {
  // A 2-layer model small enough to fill at once: d_model 256, 4 heads of 64, d_ff 1024 (gelu),
  // vocab 1000, tied, learned positions (context 256), biases, layernorm.
  TempDir dir("napkin_fake_train");
  const std::string spec = (dir / "tiny.toml").string();
  std::ofstream(spec) << "name = \"Tiny\"\nsource = \"test\"\nlayers = 2\nd_model = 256\nheads = 4\nd_ff = 1024\n"
                         "mlp = \"gelu\"\nvocab = 1000\ncontext = 256\ntied_embeddings = true\n"
                         "positions = \"learned\"\nbias = \"all\"\nnorm = \"layernorm\"\n";
  const auto f = fake("train --model " + spec + " --tokens 1B --gpus 8 --hardware h100-sxm --mfu calibrated --seq 128 --iters 2 --json");
  REQUIRE_MESSAGE(f.r.exit_code == 0, f.r.err);
  const json j = json::parse(f.r.out);
  // The step at 128 tokens: 6 weight products x 2 layers + 2 attention products x 2 at half +
  // the LM head = 15 weighted calls forward, 45 in all, x 2 us; plus the useful FLOPs at 800
  // TFLOP/s: GEMM weights 2·(4·256² + 2·256·1024) + 1000·256 = 1,828,864, 6·that·128 =
  // 1,404,567,552, causal attention 3·2·4·128·(64 + 64)·128 = 50,331,648.
  const double step = 45 * 2e-6 + (1404567552.0 + 50331648.0) / 800e12;
  // napkin train's FLOPs per token: 6·P + attention. P = embedding 256,000 + positions 65,536
  // + per layer (qkv 196,608 + 768, o 65,536 + 256, up 262,144 + 1,024, down 262,144 + 256,
  // two layernorms 1,024 = 789,760) x 2 + final layernorm 512 = 1,901,568; attention
  // 3·2·4·128·128 = 393,216 per token.
  const double per_token = 6 * 1901568.0 + 393216.0;
  CHECK(j["mfu"].get<double>() == doctest::Approx(per_token * 128 / step / 989.5e12).epsilon(1e-5));
  CHECK(j["mfu_source"].get<std::string>().rfind("calibrated: tiny", 0) == 0);
}

TEST_CASE("each way the GPU cannot be used is one line") {
  expect_error(fake("bench --device cuda --shape 64", "no_driver"), 1,
               "no NVIDIA driver: libcuda.so.1 is not installed or cannot be loaded (install the NVIDIA driver)");
  expect_error(fake("bench --device cuda --shape 64", "old_driver"), 1,
               "NVIDIA driver too old: it supports CUDA 12.4 (driver 550.54.15); napkin's CUDA module was built with "
               "CUDA 13.0, which needs driver 580 or newer");
  expect_error(fake("bench --device cuda --shape 64", "no_device"), 1, "no CUDA device: no CUDA-capable device is detected");
  // --list-devices says the same, and --device auto falls back to the CPU.
  const auto list = fake("bench --list-devices --json", "no_device");
  CHECK(json::parse(list.r.out)[0]["detail"] == "no CUDA device: no CUDA-capable device is detected");
  // A module whose CUDA libraries are missing: the stand-in's module copied away from the
  // library it needs (its RUNPATH is $ORIGIN).
  TempDir dir("napkin_fake_module");
  const auto copy = dir / "libnapkin_cuda.so";
  std::filesystem::copy_file(NAPKIN_FAKE_CUDA_MODULE, copy);
  auto r = run_napkin("bench --device cuda --shape 64", "NAPKIN_CUDA_MODULE='" + copy.string() + "'");
  CHECK(r.exit_code == 1);
  CHECK(r.err == "napkin: error: CUDA libraries missing: libnapkin_fake_cuda.so: cannot open shared object file: No such "
                 "file or directory (needed by " + copy.string() + ")\n");
  r = run_napkin("bench --device cuda --shape 64", "NAPKIN_CUDA_MODULE='" NAPKIN_BAD_ABI_MODULE "'");
  CHECK(r.exit_code == 1);
  CHECK(r.err == "napkin: error: " NAPKIN_BAD_ABI_MODULE " was built for another napkin (module ABI 999, 0.0.0-other; "
                 "this napkin 0.1.0, ABI 3): rebuild or reinstall napkin\n");
}

TEST_CASE("faults during a run: failed allocations, unusable and failing candidates") {
  for (const char* f : {"malloc_fail=1", "malloc_fail=3"})
    expect_error(fake("bench --device cuda --shape 64x48x80 --iters 2 --warmup 0", f), 1, "CUDA error in cudaMalloc: out of memory");
  expect_error(fake("bench --device cuda --shape 64x48x80 --iters 2 --warmup 0", "stream_create_fails"), 1,
               "CUDA error in cudaStreamCreate: out of memory");
  // Skipped candidates: the first usable one wins, and it is slower by (1 + i/4).
  for (auto [faults, chosen] : {std::pair{"bad_state=2", 2}, std::pair{"matmul_fail=1", 1}}) {
    const auto f = fake("bench --device cuda --shape 64x48x80 --iters 2 --warmup 0 --json", faults);
    REQUIRE(f.r.exit_code == 0);
    const json r = json::parse(f.r.out)["results"][0];
    CHECK(r["algorithm"].get<std::string>().rfind("cuBLASLt #" + std::to_string(chosen + 1) + " of 4", 0) == 0);
    CHECK(r["time_s_median"].get<double>() == doctest::Approx(product_s(64, 48, 80, 800e12, chosen)).epsilon(1e-6));
  }
  const auto none = fake("bench --device cuda --shape 64x48x80 --iters 2 --warmup 0", "bad_state=2,matmul_fail=4");
  CHECK(none.r.exit_code == 1);
  CHECK(none.r.err.rfind("napkin: error: cuBLASLt: none of the 4 candidate algorithms for 64x48x80 bf16 ran (#1: state", 0) == 0);
}

TEST_CASE("napkin's correctness check refuses a product computed with TRANSA ignored") {
  // M = K, so the misread A stays inside its allocation: a wrong product, not a crash.
  const auto f = fake("bench --device cuda --shape 64x48x64 --iters 2 --warmup 0", "ignore_transa");
  CHECK(f.r.exit_code == 1);
  CHECK(f.r.out.empty());
  CHECK(f.r.err.rfind("napkin: error: wrong result: 64x48x64 bf16 on NVIDIA H100 80GB HBM3", 0) == 0);
  CHECK(f.r.err.find("no throughput reported") != std::string::npos);
}

TEST_CASE("warm-up length does not change how often the bench stream runs dry") {
  const auto a = fake("bench --device cuda --shape 64x48x80 --iters 2 --warmup 0.05");
  const auto b = fake("bench --device cuda --shape 64x48x80 --iters 2 --warmup 0.3");
  REQUIRE(a.r.exit_code == 0);
  REQUIRE(b.r.exit_code == 0);
  CHECK(a.report["nonblocking_stream_refills"] == b.report["nonblocking_stream_refills"]);
  // And the products were issued back to back: far more than the 2 timed and a few chosen.
  CHECK(b.report["calls"]["cublasLtMatmul"].get<long>() > 100);
}

TEST_CASE("Ctrl-C stops --iters 5e6, prints what was measured, exits 130") {
  // Minutes at the stand-in's pace (tens of µs a product with the flush); napkin allows an hour,
  // 720 µs a product.
  TempDir dir("napkin_fake_sigint");
  const std::string report = (dir / "report.json").string();
  const auto r = napkin::test::interrupt_when_timing(
      {"bench", "--device", "cuda", "--shape", "64", "--iters", "5e6", "--warmup", "0", "--json"},
      {"NAPKIN_CUDA_MODULE=" NAPKIN_FAKE_CUDA_MODULE, "NAPKIN_FAKE_CUDA_REPORT=" + report});
  CAPTURE(r.err);
  CHECK(r.status == 130);
  const json j = json::parse(r.out);
  CHECK(j["interrupted"] == true);
  REQUIRE(j["results"].size() == 1);
  CHECK(j["results"][0]["iterations"].get<long long>() >= 1);
  CHECK(j["results"][0]["iterations"].get<long long>() < 5000000LL);
  CHECK(j["results"][0]["check"]["ok"] == true);
  CHECK(r.err.find("napkin: error: interrupted by Ctrl-C: 1 of 1 shapes measured (printed above; the last may be partial)\n") !=
        std::string::npos);
  const json rep = json::parse(napkin::test::slurp(report));
  for (const auto& [what, n] : rep["live"].items()) CHECK_MESSAGE(n.get<long>() == 0, what);
  CHECK(rep["violations"].empty());
}

TEST_CASE("a shape larger than the device's free memory is refused before anything is allocated") {
  // 200000^2 bf16 values are 8e10 bytes for each of A, B and D: 2.4e11 bytes, more than the
  // 79.5 GiB the stand-in leaves free. (Its memory is the host's once written: a shape that
  // fits the stand-in's 80 GiB would really be filled, so tests keep to small ones.)
  const auto f = fake("bench --device cuda --shape 200000 --iters 1 --warmup 0");
  CHECK(f.r.exit_code == 2);
  CHECK(f.r.err.find("of device memory; NVIDIA H100 80GB HBM3 has 79.50 GiB free of 80.00 GiB") != std::string::npos);
  CHECK(f.report["calls"].value("cudaMalloc", 0) == 1);  // only initialisation's
}

TEST_CASE("bad values for bench's flags are one line") {
  for (auto [args, message] : {std::pair{"--iters 0", "--iters must be at least 1, found '0'"},
                               std::pair{"--iters 1e10", "--iters must be at most 2147483647, found '1e10'"},
                               std::pair{"--batch 0", "--batch must be at least 1, found '0'"},
                               std::pair{"--algos 0", "--algos must be at least 1"},
                               std::pair{"--warmup -1", "--warmup must be between 0 and 3600 seconds, found '-1'"},
                               std::pair{"--peak 0", "--peak must be a positive FLOP/s figure such as 989.5T"},
                               std::pair{"--iters ''", "--iters: empty value; expected N"}}) {
    const auto f = fake(std::string("bench --device cuda --shape 64 ") + args, "", "", false);
    CAPTURE(args);
    expect_error(f, 2, message);
  }
}

TEST_CASE("bench --memory --device cuda: a device copy at the stand-in's 3 TB/s, MBU against the H100's 3.35 TB/s") {
  // README.md: device memory moves at 3 TB/s; a copy of N bytes reads and writes each (2N).
  // Peak: hardware/h100-sxm.toml, 3.35 TB/s (NVIDIA H100 datasheet), detected from the name.
  const auto f = fake("bench --memory --device cuda --size 16MiB --iters 3 --json");
  REQUIRE(f.r.exit_code == 0);
  const json j = json::parse(f.r.out);
  CHECK(j["array_bytes"] == 16777216);
  CHECK(j["arrays"] == 2);
  CHECK(j["kernels"].size() == 1);
  CHECK(j["kernels"][0]["kernel"] == "device copy");
  CHECK(j["kernels"][0]["bytes_per_call"] == 2 * 16777216LL);
  CHECK(j["kernels"][0]["iterations"] == 3);
  CHECK(j["bytes_per_s"].get<double>() == doctest::Approx(3e12).epsilon(1e-5));
  CHECK(j["hardware"] == "h100-sxm");
  CHECK(j["mbu"].get<double>() == doctest::Approx(3e12 / 3.35e12).epsilon(1e-5));
  CHECK(j["check"]["ok"] == true);
  CHECK(f.report["calls"]["cudaMemcpyAsync"].get<long>() >= 4);  // the warm-up and 3 timed copies
  // The second buffer's allocation fails: one line, exit 1, nothing left alive (checked by fake()).
  expect_error(fake("bench --memory --device cuda --size 16MiB --iters 3", "malloc_fail=2"), 1,
               "CUDA error in cudaMalloc: out of memory");
  // A buffer pair larger than the device's free memory is refused before allocating.
  const auto big = fake("bench --memory --device cuda --size 60GiB --iters 1");
  CHECK(big.r.exit_code != 0);
  CHECK(big.r.err.find("two such buffers") != std::string::npos);
}
