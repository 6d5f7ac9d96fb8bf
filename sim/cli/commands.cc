#include "sim/cli/commands.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>

#include "sim/config/loader.h"
#include "sim/core/atomic_file.h"
#include "sim/engine/resource_estimate.h"
#include "sim/engine/simulation.h"
#include "sim/report/chrome_trace.h"
#include "sim/report/summary.h"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;

// Parses "all" or a comma list of ranks and ranges ("0,3,8-15").
Result<std::vector<int>> ParseRanks(const std::string& text, int gpus) {
  InputError err;
  err.key = "--trace-ranks";
  std::vector<int> ranks;
  if (text == "all") {
    for (int r = 0; r < gpus; ++r) ranks.push_back(r);
    return ranks;
  }
  std::stringstream ss(text);
  std::string item;
  std::vector<bool> seen(gpus, false);
  while (std::getline(ss, item, ',')) {
    int lo = 0, hi = 0;
    char dash = 0;
    std::stringstream is(item);
    if (!(is >> lo)) {
      err.message = "expected 'all' or ranks like 0,3,8-15, found '" + item + "'";
      return err;
    }
    hi = lo;
    if (is >> dash) {
      if (dash != '-' || !(is >> hi)) {
        err.message = "expected a rank range like 8-15, found '" + item + "'";
        return err;
      }
    }
    if (lo < 0 || hi >= gpus || lo > hi) {
      err.message = "rank range '" + item + "' is outside 0.." + std::to_string(gpus - 1);
      return err;
    }
    for (int r = lo; r <= hi; ++r) {
      if (!seen[r]) ranks.push_back(r);
      seen[r] = true;
    }
  }
  if (ranks.empty()) {
    err.message = "no ranks given";
    return err;
  }
  return ranks;
}

// "trace: PATH (12.3 MB, 8 of 64 ranks)".
std::string TraceLine(const fs::path& path, size_t ranks, int gpus) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  return fmt::format("trace: {} ({:.1f} MB, {} of {} ranks)\n", path.string(),
                     ec ? 0.0 : static_cast<double>(size) / 1e6, ranks, gpus);
}

// The resource guard: refuses a run estimated to need more memory than the host has
// available or --max-memory allows, before anything large is built.
Status CheckResources(const Experiment& e, const SimulationOptions& options, double max_gib) {
  const ResourceEstimate est = EstimateResources(e, options);
  spdlog::info("estimate: {:.0f} MiB, {:.1f} s ({} ops, {} links)", est.bytes / (1 << 20),
               est.seconds, est.ops, est.topology_links);
  const AvailableMemory available = ReadAvailableMemory();
  const double asked = max_gib * 1024 * 1024 * 1024;
  const bool by_option = asked > 0 && (available.bytes <= 0 || asked <= available.bytes);
  const double limit = by_option ? asked : available.bytes;
  if (limit <= 0 || est.bytes <= limit) return Ok{};
  InputError err;
  err.key = "--max-memory";
  err.message = DescribeOverLimit(est, limit, by_option ? "--max-memory" : available.source);
  return err;
}

}  // namespace

int Validate(const std::string& experiment, const std::vector<std::string>& sets) {
  Result<Experiment> e = LoadExperimentFile(experiment, sets);
  if (!e.ok()) return ReportError(e.error());
  const PlanSpec& p = e.value().plan;
  std::cout << "ok: " << e.value().name << ": " << p.Ranks() << " GPUs, tp " << p.tp << " pp "
            << p.pp << " dp " << p.dp << " cp " << p.cp << ", " << p.MicroBatches()
            << " micro-batches\n";
  return kOk;
}

int Run(const RunArgs& args) {
  Result<Experiment> loaded = LoadExperimentFile(args.experiment, args.sets);
  if (!loaded.ok()) return ReportError(loaded.error());
  const Experiment& e = loaded.value();

  const Mesh mesh(e.plan);
  std::vector<int> trace_ranks;
  if (!args.no_trace) {
    if (args.trace_ranks.empty()) {
      trace_ranks = DefaultTraceRanks(mesh);
    } else {
      Result<std::vector<int>> r = ParseRanks(args.trace_ranks, mesh.Size());
      if (!r.ok()) return ReportError(r.error());
      trace_ranks = r.value();
    }
  }

  spdlog::info("simulating {}: {} GPUs", e.name, mesh.Size());
  SimulationOptions options;
  options.memory_curve_ranks = trace_ranks;
  options.full_replay = args.full_replay;
  const Status fits = CheckResources(e, options, args.max_memory_gib);
  if (!fits.ok()) return ReportError(fits.error());
  const std::unique_ptr<Simulation> sim = Simulate(e, options);
  if (!sim->replay.completed) {
    std::cerr << "meshsim: internal error: the replay stalled: " << sim->replay.stall << "\n";
    return kInternal;
  }
  spdlog::info("replayed {} ops, {} events in {:.3f} s", sim->program.OpCount(), sim->replay.events,
               sim->wall_s);

  SummaryOptions so;
  so.reproducible = args.reproducible;
  const StepSummary summary = SummarizeStep(*sim, so);

  const fs::path outdir =
      args.outdir.empty() ? fs::path("results/runs") / e.name : fs::path(args.outdir);
  std::string trace_line;
  if (!args.no_trace) {
    const fs::path trace = args.trace.empty() ? outdir / "trace.json" : fs::path(args.trace);
    const Status written = WriteChromeTraceFile(*sim, trace_ranks, trace.string());
    if (!written.ok()) return ReportError(written.error());
    trace_line = TraceLine(trace, trace_ranks.size(), mesh.Size());
  }
  if (args.summary == "-") {
    WriteSummaryText(summary, std::cout);
    std::cout << "\n";
    // stdout holds the JSON alone; the trace line goes to stderr, unless -q.
    if (spdlog::should_log(spdlog::level::warn)) std::cerr << trace_line;
  } else {
    const fs::path path = args.summary.empty() ? outdir / "summary.json" : fs::path(args.summary);
    const Status written = WriteFileAtomically(path.string(), [&summary](std::ostream& out) {
      WriteSummaryText(summary, out);
      out << "\n";
      return static_cast<bool>(out);
    });
    if (!written.ok()) return ReportError(written.error());
    std::cout << HumanSummary(summary) << trace_line;
    spdlog::info("wrote {}", path.string());
  }
  return summary.fits ? kOk : kDoesNotFit;
}

}  // namespace meshsim::cli
