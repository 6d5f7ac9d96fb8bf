// meshsim bench-collective: nccl-tests' table for the simulated cluster.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <string_view>

#include "sim/cli/commands.h"
#include "sim/config/loader.h"
#include "sim/engine/collective_bench.h"

namespace meshsim::cli {
namespace {

void PrintCsv(const std::vector<CollectiveBenchRow>& rows) {
  std::cout << "bytes,time_us,algbw_gbps,busbw_gbps\n";
  for (const auto& r : rows) {
    std::cout << fmt::format("{:.0f},{:.3f},{:.3f},{:.3f}\n", r.bytes, r.time_s * 1e6, r.algbw_gbps,
                             r.busbw_gbps);
  }
}

std::string_view AlgorithmName(AllReduceAlgorithm a) {
  switch (a) {
    case AllReduceAlgorithm::kTree:
      return "tree";
    case AllReduceAlgorithm::kHierarchical:
      return "hierarchical";
    case AllReduceAlgorithm::kNvls:
      return "nvls";
    case AllReduceAlgorithm::kNvlsTree:
      return "nvls_tree";
    default:
      return "ring";
  }
}

// nccl-tests' columns, the NICs' rate, how NCCL's tuner model ran each size and what that
// model says the choice takes.
void PrintTable(const BenchCollectiveArgs& a, const ClusterSpec& c,
                const std::vector<CollectiveBenchRow>& rows) {
  std::cout << fmt::format("# {} on {} x {} ({} per node), simulated; algorithm {}, protocol {}\n",
                           a.op, a.gpus, c.gpu.kind, c.gpus_per_node, a.algorithm, a.protocol);
  std::cout << fmt::format("{:>14} {:>12} {:>12} {:>12} {:>14} {:>20} {:>16}\n", "size (B)",
                           "time (us)", "algbw (GB/s)", "busbw (GB/s)", "NIC (GB/s)",
                           "algo/proto/channels", "NCCL model (us)");
  for (const auto& r : rows) {
    const bool tuned = r.channels > 0;
    const std::string how = tuned ? fmt::format("{}/{}/{}", AlgorithmName(r.algorithm),
                                                NcclProtocolName(r.protocol), r.channels)
                                  : std::string("-");
    std::cout << fmt::format("{:>14.0f} {:>12.2f} {:>12.2f} {:>12.2f} {:>14} {:>20} {:>16}\n",
                             r.bytes, r.time_s * 1e6, r.algbw_gbps, r.busbw_gbps,
                             r.nic_gbps > 0 ? fmt::format("{:.2f}", r.nic_gbps) : std::string("-"),
                             how,
                             tuned ? fmt::format("{:.2f}", r.model_s * 1e6) : std::string("-"));
  }
}

}  // namespace

int BenchCollectiveCommand(const BenchCollectiveArgs& a) {
  Result<ClusterSpec> cluster = LoadClusterFile(a.cluster);
  if (!cluster.ok()) return ReportError(cluster.error());
  const std::pair<const char*, CommOp> ops[] = {{"all_reduce", CommOp::kAllReduce},
                                                {"all_gather", CommOp::kAllGather},
                                                {"reduce_scatter", CommOp::kReduceScatter},
                                                {"all_to_all", CommOp::kAllToAll},
                                                {"sendrecv", CommOp::kSendRecv}};
  const auto* op =
      std::find_if(std::begin(ops), std::end(ops), [&](const auto& o) { return a.op == o.first; });
  if (op == std::end(ops)) {
    return ReportBadOption("--op",
                           "expected all_reduce | all_gather | reduce_scatter | all_to_all | "
                           "sendrecv, found '" +
                               a.op + "'");
  }
  if (a.gpus < 2)
    return ReportBadOption("--gpus", "expected at least 2 GPUs, found " + std::to_string(a.gpus));
  if (!(a.min_bytes > 0) || a.max_bytes < a.min_bytes) {
    return ReportBadOption("--min-bytes", "expected 0 < min-bytes <= max-bytes");
  }
  if (a.max_bytes > 1e15) {  // simulated times stay within SimTime's range (106 days)
    return ReportBadOption("--max-bytes",
                           fmt::format("expected at most 1e15 bytes, found {}", a.max_bytes));
  }
  const std::pair<const char*, AllReduceAlgorithm> algorithms[] = {
      {"auto", AllReduceAlgorithm::kAuto},
      {"ring", AllReduceAlgorithm::kRing},
      {"hierarchical", AllReduceAlgorithm::kHierarchical},
      {"tree", AllReduceAlgorithm::kTree},
      {"nvls", AllReduceAlgorithm::kNvls}};
  const auto* alg = std::find_if(std::begin(algorithms), std::end(algorithms),
                                 [&](const auto& o) { return a.algorithm == o.first; });
  if (alg == std::end(algorithms)) {
    return ReportBadOption(
        "--algorithm",
        "expected auto | ring | hierarchical | tree | nvls, found '" + a.algorithm + "'");
  }
  const std::pair<const char*, NcclProtocol> protocols[] = {{"auto", NcclProtocol::kAuto},
                                                            {"LL", NcclProtocol::kLL},
                                                            {"LL128", NcclProtocol::kLL128},
                                                            {"Simple", NcclProtocol::kSimple}};
  const auto* proto = std::find_if(std::begin(protocols), std::end(protocols),
                                   [&](const auto& o) { return a.protocol == o.first; });
  if (proto == std::end(protocols)) {
    return ReportBadOption("--protocol",
                           "expected auto | LL | LL128 | Simple, found '" + a.protocol + "'");
  }
  if (a.channels < 0 || a.channels > 64) {
    return ReportBadOption(
        "--channels", "expected 0 (as NCCL sets them) to 64, found " + std::to_string(a.channels));
  }
  const std::pair<const char*, NvlsMode> nvls_modes[] = {
      {"auto", cluster.value().intra_node.nvls}, {"on", NvlsMode::kOn}, {"off", NvlsMode::kOff}};
  const auto* nvls = std::find_if(std::begin(nvls_modes), std::end(nvls_modes),
                                  [&](const auto& o) { return a.nvls == o.first; });
  if (nvls == std::end(nvls_modes)) {
    return ReportBadOption("--nvls", "expected auto | on | off, found '" + a.nvls + "'");
  }
  cluster.value().intra_node.nvls = nvls->second;  // as NCCL_NVLS_ENABLE overrides NCCL's own
  Result<std::vector<CollectiveBenchRow>> rows =
      BenchCollective(cluster.value(), op->second, a.gpus, a.min_bytes, a.max_bytes,
                      NcclOptions{alg->second, proto->second, a.channels});
  if (!rows.ok()) {
    std::cerr << "meshsim: error: " << a.cluster << ": " << rows.error().ToString() << "\n";
    return kBadInput;
  }
  if (a.csv) {
    PrintCsv(rows.value());
    return kOk;
  }
  PrintTable(a, cluster.value(), rows.value());
  return kOk;
}

}  // namespace meshsim::cli
