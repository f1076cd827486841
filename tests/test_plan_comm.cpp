// Interconnect figures (units, spec tables) and the time of one collective, each checked
// against arithmetic done by hand in the comment.
#include <doctest/doctest.h>

#include <string>

#include "core/comm.hpp"
#include "core/error.hpp"
#include "core/interconnect.hpp"
#include "spec/registry.hpp"
#include "spec/spec_loader.hpp"

using namespace napkin;

namespace {
// doctest's Approx adds 1 to the scale of its tolerance, which makes every value under 1e-5 "equal";
// these times are microseconds, so compare relatively.
doctest::Approx near(double v) { return doctest::Approx(v).scale(0); }
}  // namespace

TEST_CASE("bandwidth units: bits and bytes per second, never a bare number") {
  CHECK(parse_bandwidth("400Gb/s", "--scale-out-bw") == near(50e9));  // 400e9 bits / 8
  CHECK(parse_bandwidth("50GB/s", "--scale-out-bw") == near(50e9));
  CHECK(parse_bandwidth("450 GB/s", "x") == near(450e9));
  CHECK(parse_bandwidth("3.2Tb/s", "x") == near(400e9));
  CHECK(parse_bandwidth("100Gbps", "x") == near(12.5e9));
  CHECK(parse_bandwidth("900GBps", "x") == near(900e9));
  CHECK(parse_bandwidth("800Mb/s", "x") == near(100e6));
  CHECK_THROWS_WITH_AS(parse_bandwidth("400", "--scale-out-bw"), doctest::Contains("--scale-out-bw: '400' has no unit"), Error);
  CHECK_THROWS_WITH_AS(parse_bandwidth("400GB", "--scale-up-bw"), doctest::Contains("unknown unit"), Error);
  CHECK_THROWS_WITH_AS(parse_bandwidth("400Xb/s", "x"), doctest::Contains("unknown prefix 'X'"), Error);
  CHECK_THROWS_WITH_AS(parse_bandwidth("fast", "x"), doctest::Contains("not a number"), Error);
  CHECK_THROWS_AS(parse_bandwidth("0GB/s", "x"), Error);
  CHECK_THROWS_AS(parse_bandwidth("-5GB/s", "x"), Error);
  CHECK_THROWS_AS(parse_bandwidth("1e400GB/s", "x"), Error);
}

TEST_CASE("durations need a unit") {
  CHECK(parse_duration("9.6us", "x") == near(9.6e-6));
  CHECK(parse_duration("2ms", "x") == near(2e-3));
  CHECK(parse_duration("1s", "x") == near(1));
  CHECK(parse_duration("500ns", "x") == near(5e-7));
  CHECK_THROWS_WITH_AS(parse_duration("5", "scale_up_latency"), doctest::Contains("with its unit"), Error);
}

TEST_CASE("tensor-parallel groups that straddle a domain a tp does not divide") {
  // 12 ranks, domains of 3, tp 2: groups {0,1} {2,3} {4,5} ... ; {2,3} and {8,9} straddle.
  const Straddle s = straddling_groups(2, 12, 3);
  CHECK(s.groups == 2);
  CHECK(s.per_period == 1);
  CHECK(s.period == 3);
  // NVL72, tp 16: 9 groups in 144 ranks (the pattern repeats every lcm(16, 72) = 144 ranks).
  const Straddle nvl = straddling_groups(16, 144, 72);
  CHECK(nvl.period == 9);
  CHECK(nvl.per_period == 1);  // only {64..79} crosses 72 in the first 144 ranks
  CHECK(nvl.groups == 1);
  // A tp that divides the domain, one as wide or wider (domain_caveat's case), or one group that fits: none.
  CHECK(straddling_groups(2, 16, 8).groups == 0);
  CHECK(straddling_groups(8, 16, 8).groups == 0);
  CHECK(straddling_groups(4, 12, 3).groups == 0);
  CHECK(straddling_groups(2, 2, 3).groups == 0);
  CHECK(straddling_groups(1, 12, 3).groups == 0);
  // A partial period: 4 ranks on domains of 3, tp 2: {2,3} straddles.
  CHECK(straddling_groups(2, 4, 3).groups == 1);
}

TEST_CASE("where a group sits: Megatron's tensor-fastest rank order on 8-GPU domains") {
  // tp = 8: one domain.
  CHECK(place_group(1, 8, 8).per_domain == 8);
  CHECK_FALSE(place_group(1, 8, 8).crosses_domains());
  // data parallel with tp = 8: consecutive replicas are 8 ranks apart, one per domain.
  CHECK(place_group(8, 16, 8).per_domain == 1);
  // data parallel with tp = 2: 4 replicas share each domain.
  CHECK(place_group(2, 16, 8).per_domain == 4);
  CHECK(place_group(2, 16, 8).crosses_domains());
  // a group of 2 with stride 2 fits in a domain.
  CHECK(place_group(2, 2, 8).per_domain == 2);
  // a 72-GPU NVL72 domain holds 9 members 8 apart; 16 of them do not split evenly over
  // domains (9 + 7), so napkin takes the slow case, one per domain; 9 of them fit in one.
  CHECK(place_group(8, 16, 72).per_domain == 1);
  CHECK(place_group(8, 9, 72).per_domain == 9);
}

TEST_CASE("collective times by hand") {
  Network net;
  net.domain_gpus = 8;
  net.scale_up_bytes_per_s = 300e9;
  net.scale_out_bytes_per_s = 25e9;
  net.scale_up_latency_s = 3.4e-6;
  net.scale_out_latency_s = 9.6e-6;
  const double S = 100e6;

  // The ramp: 100 MB costs 100·(1 + 24/124) = 119.3548 MB at the full rate; tiny messages
  // twice their size, a 24 MB one 1.5 times.
  CHECK(ramped_bytes(S) == near(119.3548e6).epsilon(1e-6));
  CHECK(ramped_bytes(1e3) == near(2e3).epsilon(1e-4));
  CHECK(ramped_bytes(24e6) == near(36e6));

  // All-reduce of 100 MB over the 8 GPUs of one domain: latency 8.4 + 2·7·3.4 = 56 µs; bus
  // bandwidth 300 · 0.79 = 237 GB/s; 2·7/8 · 119.3548 MB / 237 GB/s = 881.31 µs.
  CHECK(collective_time_s(Collective::all_reduce, S, place_group(1, 8, 8), net) == near(56e-6 + 881.31e-6).epsilon(1e-4));

  // Reduce-scatter over 16 replicas, one per domain (tp = 8): every ring step leaves the domain:
  // latency 8.4 + 15·9.6 = 152.4 µs; bus bandwidth one NIC, 25 · 0.74 = 18.5 GB/s;
  // 15/16 · 119.3548 MB / 18.5 GB/s = 6.048385 ms.
  CHECK(collective_time_s(Collective::reduce_scatter, S, place_group(8, 16, 8), net) ==
        near(152.4e-6 + 6.048385e-3).epsilon(1e-4));

  // All-gather over 16 replicas, 4 per domain (tp = 2): 4 NICs carry the ring: min(300 · 0.79,
  // 4 · 25 · 0.74) = 74 GB/s; 4 domains: 3 network steps, 12 NVLink steps: 8.4 + 12·3.4 + 3·9.6 =
  // 78 µs; 15/16 · 119.3548 MB / 74 GB/s = 1.512097 ms.
  CHECK(collective_time_s(Collective::all_gather, S, place_group(2, 16, 8), net) == near(78e-6 + 1.512097e-3).epsilon(1e-4));

  // All-to-all over 16 ranks, 8 per domain: 7/16 of the data over NVLink, 8/16 over the NIC:
  // max(119.3548e6·7/16 / 237e9, 119.3548e6·8/16 / 18.5e9) = 3.225805 ms, + 8.4 + 9.6 µs.
  CHECK(collective_time_s(Collective::all_to_all, S, place_group(1, 16, 8), net) == near(18e-6 + 3.225805e-3).epsilon(1e-4));

  // Send/recv across domains: 8.4 + 9.6 µs + 119.3548 MB / 18.5 GB/s = 6.451611 ms.
  CHECK(collective_time_s(Collective::send_recv, S, place_group(64, 4, 8), net) == near(18e-6 + 6.451611e-3).epsilon(1e-4));

  // A mesh (MI300X: 7 Infinity Fabric links, 448 GB/s to all peers, 64 to one): a pair gets one
  // link, 64 · 0.79 = 50.56 GB/s: all-reduce over 2 = 8.4 + 2·3.4 µs + 119.3548 MB / 50.56 GB/s;
  // eight GPUs get all seven links, 353.92 GB/s.
  Network mesh = net;
  mesh.scale_up_mesh = true;
  mesh.scale_up_bytes_per_s = 448e9;
  CHECK(collective_time_s(Collective::all_reduce, S, place_group(1, 2, 8), mesh) == near(15.2e-6 + 2.360656e-3).epsilon(1e-4));
  CHECK(bus_bandwidth_bytes_per_s(mesh, place_group(1, 8, 8)) == near(353.92e9));
  CHECK(bus_bandwidth_bytes_per_s(mesh, place_group(1, 4, 8)) == near(448e9 * 3 / 7 * 0.79));

  // A group of one communicates nothing.
  CHECK(collective_time_s(Collective::all_reduce, S, place_group(1, 1, 8), net) == 0);
  // The bus-bandwidth formula itself: nccl-tests busbw = algbw · 2(n−1)/n, so the time of an
  // all-reduce at bus bandwidth β is S·2(n−1)/n/β: doubling n from 2 to 8 raises the factor
  // from 1 to 1.75.
  Network fast = net;
  fast.scale_up_latency_s = 0;
  const double t2 = collective_time_s(Collective::all_reduce, S, place_group(1, 2, 8), fast) - collective_base_latency_s;
  const double t8 = collective_time_s(Collective::all_reduce, S, place_group(1, 8, 8), fast) - collective_base_latency_s;
  CHECK(t8 / t2 == near(1.75));
}

TEST_CASE("interconnect tables in hardware specs") {
  const std::string base =
      "name = \"Card\"\nvendor = \"V\"\nmemory_bytes = \"80GB\"\nmemory_bandwidth_bytes_per_s = \"2TB\"\n"
      "tensor_figures_quoted_sparse = false\nsource = \"s\"\n[dense_tflops]\nbf16 = 100\n";
  SUBCASE("usable memory may exceed the datasheet by GiB/GB, not more") {
    // 80 GB on the datasheet, 85.5e9 bytes from the driver (80 GiB): 1.07 ×, kept; 1e15 is refused.
    CHECK(*parse_hardware("usable_memory_bytes = \"85.5GB\"\n" + base, "card.toml", "card").usable_memory_bytes == doctest::Approx(85.5e9));
    CHECK_THROWS_WITH_AS(parse_hardware("usable_memory_bytes = \"1PB\"\n" + base, "card.toml", "card"),
                         doctest::Contains("usable_memory_bytes: must be at most 1.1 × memory_bytes"), Error);
  }
  SUBCASE("optional: a part without one loads with nothing known") {
    const Hardware h = parse_hardware(base, "card.toml", "card");
    CHECK_FALSE(h.interconnect.scale_up_gpus);
    CHECK(missing_interconnect_figures(h.interconnect, true).size() == 3);
    CHECK(missing_interconnect_figures(h.interconnect, false).size() == 2);
  }
  SUBCASE("complete") {
    const Hardware h = parse_hardware(base +
                                          "[interconnect]\nscale_up = \"NVLink\"\nscale_up_gpus = 8\nscale_up_bandwidth = \"450GB/s\"\n"
                                          "scale_up_latency = \"3.4us\"\nscale_out = \"IB\"\nscale_out_bandwidth = \"400Gb/s\"\n"
                                          "scale_out_latency = \"9.6us\"\nsource = \"datasheet\"\n",
                                      "card.toml", "card");
    CHECK(*h.interconnect.scale_up_gpus == 8);
    CHECK(*h.interconnect.scale_up.bandwidth_bytes_per_s == near(450e9));
    CHECK(*h.interconnect.scale_out.bandwidth_bytes_per_s == near(50e9));
    CHECK(*h.interconnect.scale_out.latency_s == near(9.6e-6));
    CHECK(missing_interconnect_figures(h.interconnect, true).empty());
  }
  SUBCASE("a bare number is refused with file:line:col and the key") {
    CHECK_THROWS_WITH_AS(parse_hardware(base + "[interconnect]\nscale_up_bandwidth = 450\nsource = \"s\"\n", "card.toml", "card"),
                         doctest::Contains("card.toml:10:22: interconnect.scale_up_bandwidth: write the unit"), Error);
    CHECK_THROWS_WITH_AS(parse_hardware(base + "[interconnect]\nscale_out_bandwidth = \"400\"\nsource = \"s\"\n", "card.toml", "card"),
                         doctest::Contains("interconnect.scale_out_bandwidth: '400' has no unit"), Error);
  }
  SUBCASE("a mesh instead of a switch") {
    const Hardware h = parse_hardware(base + "[interconnect]\nscale_up_topology = \"mesh\"\nsource = \"s\"\n", "card.toml", "card");
    CHECK(h.interconnect.scale_up_mesh);
    CHECK_THROWS_WITH_AS(parse_hardware(base + "[interconnect]\nscale_up_topology = \"ring\"\nsource = \"s\"\n", "card.toml", "card"),
                         doctest::Contains("interconnect.scale_up_topology: unknown value 'ring' (expected switch or mesh)"), Error);
  }
  SUBCASE("bounded like every spec number") {
    CHECK_THROWS_WITH_AS(parse_hardware(base + "[interconnect]\nscale_up_bandwidth = \"1e30GB/s\"\nsource = \"s\"\n", "card.toml", "card"),
                         doctest::Contains("interconnect.scale_up_bandwidth: must lie between"), Error);
    CHECK_THROWS_WITH_AS(parse_hardware(base + "[interconnect]\nscale_out_latency = \"5s\"\nsource = \"s\"\n", "card.toml", "card"),
                         doctest::Contains("interconnect.scale_out_latency: must lie between 0 and 1 s, found 5"), Error);
    CHECK_THROWS_AS(parse_hardware(base + "[interconnect]\nscale_up_gpus = 99999999\nsource = \"s\"\n", "card.toml", "card"), Error);
  }
  SUBCASE("unknown keys and a missing source") {
    CHECK_THROWS_WITH_AS(parse_hardware(base + "[interconnect]\nscale_up_gpu = 8\nsource = \"s\"\n", "card.toml", "card"),
                         doctest::Contains("interconnect.scale_up_gpu: unknown key; did you mean 'scale_up_gpus'"), Error);
    CHECK_THROWS_WITH_AS(parse_hardware(base + "[interconnect]\nscale_up_gpus = 8\n", "card.toml", "card"),
                         doctest::Contains("interconnect.source: missing required key"), Error);
  }
}

TEST_CASE("built-in training parts carry their cluster's network") {
  const SpecRegistry reg = SpecRegistry::load({});
  const Hardware h100 = reg.hardware("h100-sxm");
  CHECK(*h100.interconnect.scale_up_gpus == 8);
  CHECK(*h100.interconnect.scale_up.bandwidth_bytes_per_s == near(450e9));   // 900 GB/s bidirectional
  CHECK(*h100.interconnect.scale_out.bandwidth_bytes_per_s == near(50e9));   // 400 Gb/s ConnectX-7
  const Hardware a100 = reg.hardware("a100-sxm-80gb");
  CHECK(*a100.interconnect.scale_up.bandwidth_bytes_per_s == near(300e9));   // 600 GB/s bidirectional
  CHECK(*a100.interconnect.scale_out.bandwidth_bytes_per_s == near(25e9));   // 200 Gb/s HDR
}
