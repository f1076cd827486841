#pragma once
// Reading nccl-tests output (NVIDIA/nccl-tests: all_reduce_perf, all_gather_perf,
// reduce_scatter_perf, alltoall_perf, sendrecv_perf) into a measured curve for --network. The
// table as the tests print it: '#' lines are comments; a data row starts with the size in bytes
// and ends with eight columns, out-of-place then in-place "time algbw busbw #wrong" (older
// versions print "error" for "#wrong"; "N/A" is accepted there). A line whose first word is a
// number, or that has the header's column count below it, is a row, and a row napkin cannot use
// (a negative size, text, nan) is an error; other lines (NCCL INFO logs, mpirun's notices) are
// skipped. A table whose every row reads 0.00 GB/s is refused, as is a run whose data check
// failed (a #wrong count not 0, or "Out of bounds values : N FAILED"). Errors name the file and line.
#include <optional>
#include <string>
#include <string_view>

#include "core/comm.hpp"

namespace napkin {

// `file` names the text in errors and in the answer.
MeasuredCurve parse_nccl_tests(std::string_view text, const std::string& file, Collective c);
MeasuredCurve load_nccl_tests(const std::string& path, Collective c);

// One --network value: [intra|inter][,COLLECTIVE]=FILE, COLLECTIVE as nccl-tests names its binaries
// (all_reduce, all_gather, reduce_scatter, alltoall, sendrecv); without it, the file's name must
// contain one of those names. Throws Error naming --network.
MeasuredCurve network_flag(const std::string& value);

// all_reduce, ..., as nccl-tests names them.
std::string_view nccl_tests_name(Collective c);

}  // namespace napkin
