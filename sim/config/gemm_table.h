// Loads a table of measured GEMM throughputs (cluster.efficiency.gemm_table).
#pragma once

#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/hw/cluster_spec.h"

namespace meshsim::config {

// A CSV file with a header naming the columns m, n, k, dtype, tflops and optionally batch
// (any order, no others): one measured GEMM per row, m, n, k, batch positive integers,
// dtype bf16 | fp16 | fp8, tflops > 0. Errors (a missing file, a bad cell) name the file,
// the line and `key`.
Result<std::vector<GemmMeasurement>> LoadGemmTable(const std::string& path, const std::string& key);

}  // namespace meshsim::config
