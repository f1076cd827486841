// napkin infer --rate: an open loop of requests arriving at random (core/infer_serving
// open_loop_state), checked by hand and against the closed loop it must agree with.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "infer_helpers.hpp"
#include "core/error.hpp"
#include "core/infer_serving.hpp"
#include "spec/registry.hpp"

using namespace napkin;

TEST_CASE("Erlang C by hand") {
  // One server: an arrival waits when the server is busy, probability ρ.
  CHECK(erlang_c(1, 0.3) == doctest::Approx(0.3));
  // Two servers at a = 1 Erlang: B(2, 1) = (1/2) / (1 + 1 + 1/2) = 0.2, C = 2·0.2 / (2 − 1·0.8) = 1/3
  // (the M/M/2 queue at ρ = 0.5 waits with probability 1/3).
  CHECK(erlang_c(2, 1.0) == doctest::Approx(1.0 / 3));
  // Many servers lightly loaded: almost never wait.
  CHECK(erlang_c(256, 20.0) < 1e-12);
  CHECK_THROWS_AS(erlang_c(4, 4.0), Error);
}

TEST_CASE("an open loop: Little's law, light and heavy load, and the closed loop at the same throughput") {
  // Llama 3 8B bf16 on one H100 under vLLM, 1000-token prompts, 200 output tokens.
  const SpecRegistry specs = SpecRegistry::builtin_only();
  const Model m = specs.model("llama3-8b");
  const Hardware hw = specs.hardware("h100-sxm");
  const InferSetup s = test::serving_setup(specs, hw, "vllm", "bf16", "bf16", 1000, 200);
  const InferTimeSetup t = infer_time_setup(hw, s.weights, default_decode_mbu);
  const InferMemory mem = infer_memory(m, s);

  // Light load: almost never more than one request; the first token is the prompt's own prefill
  // and a token comes every decode step of one sequence at the mean context 1100.
  const SteadyState light = open_loop_state(m, s, mem, t, 0.01);
  const double S = prefill_time(m, s, t, 1).total_s, step1 = decode_step(m, s, mem, t, 1, 1100).step_s;
  CHECK_FALSE(light.overloaded);
  CHECK(light.ttft_s == doctest::Approx(S).epsilon(0.02));
  CHECK(light.itl_s == doctest::Approx(step1).epsilon(0.02));
  // Little's law: the mean number running is the arrival rate times the time each runs, O steps.
  CHECK(light.mean_running == doctest::Approx(0.01 * 200 * light.itl_s).epsilon(1e-6));
  // Every request is served: output = rate × O.
  CHECK(light.output_tokens_per_s == doctest::Approx(2.0));

  // The same steady state as a closed loop of C = 32 clients: that loop's request rate offered at
  // random keeps about 32 running (Little's law on both; the closed loop's own-prompt rule apart).
  const SteadyState closed = steady_state(m, s, mem, t, 32);
  const SteadyState open = open_loop_state(m, s, mem, t, closed.requests_per_s);
  CHECK(open.mean_running == doctest::Approx(32).epsilon(0.05));
  CHECK(open.itl_s == doctest::Approx(closed.step_s).epsilon(0.05));
  CHECK(open.mean_running == doctest::Approx(closed.requests_per_s * 200 * open.itl_s).epsilon(1e-6));
  // Waiting for the running step to end: the engine is busy with probability 1 − e^(−32) ≈ 1.
  CHECK(open.step_wait_s == doctest::Approx(open.itl_s / 2).epsilon(1e-6));
  // M/D/1 for the prefill: ρ = λ·S.
  CHECK(open.utilization == doctest::Approx(closed.requests_per_s * S));
  CHECK(open.prefill_wait_s == doctest::Approx(open.utilization * S / (2 * (1 - open.utilization))));

  // More load, longer waits and steps.
  const SteadyState busier = open_loop_state(m, s, mem, t, 1.2 * closed.requests_per_s);
  REQUIRE_FALSE(busier.overloaded);
  CHECK(busier.itl_s > open.itl_s);
  CHECK(busier.ttft_s > open.ttft_s);

  // Past capacity (the whole cache decoding), no steady state: overloaded, serving at capacity.
  const double capacity = open.capacity_requests_per_s;
  const SteadyState full = steady_state(m, s, mem, t, mem.max_batch);
  CHECK(capacity == doctest::Approx(full.requests_per_s).epsilon(0.02));
  const SteadyState over = open_loop_state(m, s, mem, t, 2 * capacity);
  CHECK(over.overloaded);
  CHECK(over.running == mem.max_batch);
  CHECK(over.output_tokens_per_s == doctest::Approx(capacity * 200));
  // Near capacity a request waits for a slot; far from it, it does not.
  const SteadyState near = open_loop_state(m, s, mem, t, 0.99 * capacity);
  CHECK(near.slot_wait_s > open.slot_wait_s);
  CHECK(open.slot_wait_s < 1e-6);

  // Two replicas split the arrivals: each sees half the rate.
  InferSetup two = s;
  two.gpus = 2;
  const SteadyState split = open_loop_state(m, two, mem, t, 2 * closed.requests_per_s);
  CHECK(split.mean_running == doctest::Approx(open.mean_running));
  CHECK(split.output_tokens_per_s == doctest::Approx(2 * open.output_tokens_per_s));
  CHECK_THROWS_AS(open_loop_state(m, s, mem, t, 0), Error);
  CHECK_THROWS_AS(open_loop_state(m, s, mem, t, std::nan("")), Error);
}

TEST_CASE("infer --rate on the command line") {
  using test::run_napkin;
  const std::string base = "infer --model llama3-8b --hardware h100-sxm --input 1000 --output 200 ";
  const auto table = run_napkin(base + "--rate 1,4,1000");
  REQUIRE_MESSAGE(table.exit_code == 0, table.err);
  CHECK(table.out.find("Under load: requests arriving at random (Poisson)") != std::string::npos);
  CHECK(table.out.find("overloaded: serves at most") != std::string::npos);
  CHECK(table.out.find("Latency against throughput") == std::string::npos);
  const auto j = nlohmann::json::parse(run_napkin(base + "--rate 4 --json").out);
  CHECK(j["requests_per_s"] == 4);
  CHECK(j["overloaded"] == false);
  REQUIRE(j["rate_points"].size() == 1);
  CHECK(j["output_tokens_per_s"].get<double>() == doctest::Approx(800));
  CHECK(j["tpot_s"].get<double>() == doctest::Approx(j["rate_points"][0]["tpot_s"].get<double>()));
  CHECK(j["ttft_s"].get<double>() > 0);
  CHECK(j.find("concurrency_points") == j.end());
  const auto over = nlohmann::json::parse(run_napkin(base + "--rate 1000 --json").out);
  CHECK(over["overloaded"] == true);
  CHECK(over["ttft_s"].is_null());
  CHECK(over["rate_points"][0]["capacity_requests_per_s"].get<double>() < 1000);
  for (const char* bad : {"--rate 0", "--rate -1", "--rate abc", "--rate 1,,2", "--rate 2e6", "--rate nan"}) {
    const auto r = run_napkin(base + bad);
    CHECK_MESSAGE(r.exit_code != 0, bad);
    CHECK_MESSAGE(r.err.find("--rate") != std::string::npos, bad, ": ", r.err);
  }
  const auto with_batch = run_napkin(base + "--rate 2 --batch 8");
  CHECK(with_batch.exit_code != 0);
  CHECK(with_batch.err.find("--rate excludes --batch") != std::string::npos);
  const auto with_c = run_napkin(base + "--rate 2 --concurrency 8");
  CHECK(with_c.err.find("--rate excludes --concurrency") != std::string::npos);
  const auto static_engine = run_napkin(base + "--rate 2 --engine tensorrt-llm-mmha");
  CHECK(static_engine.exit_code != 0);
  CHECK(static_engine.err.find("--rate needs an engine that batches continuously") != std::string::npos);
  const auto explain = run_napkin(base + "--rate 4 --explain");
  CHECK(explain.out.find("running x = λ × 200 steps × step(x) (Little's law), solved") != std::string::npos);
}
