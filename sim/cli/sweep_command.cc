// meshsim sweep SWEEP.yaml [-o OUTDIR] [-j THREADS] [--resume] [--shard I/N] [--html FILE]
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <thread>

#include "sim/cli/commands.h"
#include "sim/cli/sweep_commands.h"
#include "sim/cli/sweep_report.h"
#include "sim/cli/terminal.h"
#include "sim/config/sweep_loader.h"
#include "sim/sweep/runner.h"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;

// "I/N" with 0 <= I < N.
Result<std::pair<int, int>> ParseShard(const std::string& text) {
  InputError e;
  e.key = "--shard";
  const size_t slash = text.find('/');
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    size_t used = 0;
    const int i = std::stoi(text.substr(0, slash), &used);
    if (used != slash) throw std::invalid_argument("trailing");
    const std::string rest = text.substr(slash + 1);
    const int n = std::stoi(rest, &used);
    if (used != rest.size()) throw std::invalid_argument("trailing");
    if (n < 1 || i < 0 || i >= n) {
      e.message = "expected I/N with 0 <= I < N, found '" + text + "'";
      return e;
    }
    return std::make_pair(i, n);
  } catch (const std::exception&) {
    e.message = "expected I/N such as 0/4, found '" + text + "'";
    return e;
  }
}

std::string StatusCounts(const std::array<int64_t, 4>& by) {
  std::string s = fmt::format("ok {}  oom {}  invalid {}", by[0], by[1], by[2]);
  if (by[3] > 0) s += fmt::format("  error {}", by[3]);
  return s;
}

}  // namespace

int Sweep(const SweepArgs& args) {
  int shard_index = 0, shard_count = 1;
  if (!args.shard.empty()) {
    Result<std::pair<int, int>> s = ParseShard(args.shard);
    if (!s.ok()) return ReportError(s.error());
    std::tie(shard_index, shard_count) = s.value();
  }
  if (args.threads < 0) {
    InputError e;
    e.key = "-j";
    e.message = "expected a number of threads >= 1, found " + std::to_string(args.threads);
    return ReportError(e);
  }
  RetainFreedMemory();
  Result<SweepSpec> loaded = LoadSweepFile(args.sweep);
  if (!loaded.ok()) return ReportError(loaded.error());
  const SweepSpec& spec = loaded.value();
  const std::vector<Configuration> configs = Enumerate(spec);

  SweepRunOptions o;
  o.outdir = args.outdir.empty() ? (fs::path("results/sweeps") / spec.name).string() : args.outdir;
  o.threads = args.threads > 0 ? args.threads
                               : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  o.shard_index = shard_index;
  o.shard_count = shard_count;
  o.resume = args.resume;
  if (o.resume && !args.quiet && !fs::exists(fs::path(o.outdir) / "results.csv")) {
    std::cerr << "meshsim: --resume: " << (fs::path(o.outdir) / "results.csv").string()
              << " does not exist; starting the sweep afresh\n";
  }
  ProgressBar bar(!args.quiet && IsTerminal(stderr));
  o.progress = [&bar](const SweepProgress& p) {
    bar.Update(p.done, p.total, p.done - p.resumed, StatusCounts(p.by_status), p.done == p.total);
  };
  Result<SweepRunResult> run = RunSweep(spec, configs, o);
  bar.Finish();
  if (!run.ok()) return ReportError(run.error());
  const SweepRunResult& r = run.value();

  const ResultTable& t = r.table;
  std::array<int64_t, 4> all{};
  int64_t pruned = 0;
  for (const ResultRow& row : t.rows) {
    ++all[static_cast<int>(row.status)];
    if (row.status == ConfigStatus::kOom && !row.summary) ++pruned;
  }
  const int64_t fresh = r.progress.done - r.progress.resumed;
  std::cout << fmt::format(
      "sweep {}: {} configurations{}: {} ok, {} oom ({} pruned by the memory bound, {} after "
      "simulation), {} invalid{}\n",
      spec.name, r.progress.total,
      shard_count > 1
          ? fmt::format(" in shard {}/{} (of {})", shard_index, shard_count, configs.size())
          : "",
      all[0], all[1], pruned, all[1] - pruned, all[2],
      all[3] > 0 ? fmt::format(", {} error", all[3]) : "");
  std::cout << fmt::format(
      "evaluated {} configurations in {:.2f} s on {} threads ({:.1f} configurations/s){}\n", fresh,
      r.wall_s, o.threads, r.wall_s > 0 ? fresh / r.wall_s : 0.0,
      r.progress.resumed > 0
          ? fmt::format("; {} rows kept from the earlier run", r.progress.resumed)
          : "");
  const SweepProgress& p = r.progress;
  if (fresh > 0) {
    const double work = p.simulated_s + p.other_s;
    std::cout << fmt::format(
        "worker time {:.2f} s: {} simulated configurations {:.2f} s ({:.1f}%, {:.3f} s each), "
        "{} invalid or pruned {:.3f} s ({:.1f} us each)\n",
        work, p.simulated, p.simulated_s, work > 0 ? 100 * p.simulated_s / work : 0.0,
        p.simulated > 0 ? p.simulated_s / p.simulated : 0.0, fresh - p.simulated, p.other_s,
        fresh > p.simulated ? 1e6 * p.other_s / (fresh - p.simulated) : 0.0);
  }
  const Status reported = ReportSweep(t, spec.name, o.outdir, args.html, args.top, std::cout);
  if (!reported.ok()) return ReportError(reported.error());
  return kOk;
}

}  // namespace meshsim::cli
