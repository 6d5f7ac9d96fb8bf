// meshsim merge OUTDIR... -o OUTDIR: joins the results of a sweep's shards.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "sim/cli/commands.h"
#include "sim/cli/sweep_commands.h"
#include "sim/cli/sweep_report.h"
#include "sim/core/atomic_file.h"
#include "sim/sweep/runner.h"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;

int Fail(const std::string& message) {
  InputError e;
  e.key = "merge";
  e.message = message;
  return ReportError(e);
}

}  // namespace

int Merge(const MergeArgs& args) {
  if (args.inputs.empty()) return Fail("no shard folders given");
  struct Input {
    std::string dir;
    SweepManifest manifest;
    CsvTable table;
  };
  std::vector<Input> inputs;
  for (const std::string& dir : args.inputs) {
    Result<SweepManifest> m = ReadManifest(dir);
    if (!m.ok()) return ReportError(m.error());
    Result<CsvTable> t = ReadCsvFile((fs::path(dir) / "results.csv").string());
    if (!t.ok()) return ReportError(t.error());
    inputs.push_back({dir, m.value(), t.value()});
  }
  const SweepManifest& first = inputs.front().manifest;
  for (const Input& in : inputs) {
    const SweepManifest& m = in.manifest;
    if (m.fingerprint != first.fingerprint || m.configurations != first.configurations ||
        m.name != first.name) {
      return Fail(
          fmt::format("{} holds sweep {} (fingerprint {}, {} configurations) but {} holds "
                      "sweep {} (fingerprint {}, {} configurations)",
                      in.dir, m.name, m.fingerprint, m.configurations, inputs.front().dir,
                      first.name, first.fingerprint, first.configurations));
    }
    if (in.table.header != first.columns || m.columns != first.columns) {
      return Fail(in.dir + "/results.csv: its columns differ from the sweep's");
    }
  }
  // Every configuration exactly once.
  std::vector<std::pair<int, size_t>> where(first.configurations, {-1, 0});  // input, row
  for (size_t i = 0; i < inputs.size(); ++i) {
    const CsvTable& t = inputs[i].table;
    for (size_t r = 0; r < t.rows.size(); ++r) {
      const std::string& cell = t.rows[r][0];
      char* end = nullptr;
      const long long idx = std::strtoll(cell.c_str(), &end, 10);
      if (cell.empty() || *end != '\0' || idx < 0 || idx >= first.configurations) {
        return Fail(
            fmt::format("{}/results.csv line {}: '{}' is not a configuration of this sweep "
                        "(0..{})",
                        inputs[i].dir, r + 2, cell, first.configurations - 1));
      }
      if (where[idx].first >= 0) {
        return Fail(fmt::format(
            "configuration {} appears twice: {}/results.csv line {} and "
            "{}/results.csv line {}",
            idx, inputs[where[idx].first].dir, where[idx].second + 2, inputs[i].dir, r + 2));
      }
      where[idx] = {static_cast<int>(i), r};
    }
  }
  std::vector<long long> missing;
  for (long long idx = 0; idx < first.configurations; ++idx) {
    if (where[idx].first < 0) missing.push_back(idx);
  }
  if (!missing.empty()) {
    std::string list;
    for (size_t k = 0; k < std::min<size_t>(missing.size(), 10); ++k) {
      list += (k ? ", " : "") + std::to_string(missing[k]);
    }
    if (missing.size() > 10) list += ", ...";
    const long long m0 = missing.front();
    std::string hint;
    if (first.shard_count > 1) {
      hint = fmt::format(
          " (configuration {} belongs to shard {}/{}; was it run to the end, and "
          "is its folder among the inputs?)",
          m0, m0 % first.shard_count, first.shard_count);
    }
    return Fail(fmt::format("{} of {} configurations missing: {}{}", missing.size(),
                            first.configurations, list, hint));
  }

  CsvTable merged;
  merged.header = first.columns;
  for (long long idx = 0; idx < first.configurations; ++idx) {
    merged.rows.push_back(inputs[where[idx].first].table.rows[where[idx].second]);
  }
  std::string text = CsvLine(merged.header);
  for (const CsvRow& row : merged.rows) text += CsvLine(row);
  const std::string out_csv = (fs::path(args.outdir) / "results.csv").string();
  if (Status s = WriteFileAtomically(out_csv, text); !s.ok()) return ReportError(s.error());
  SweepManifest m = first;
  m.shard_index = 0;
  m.shard_count = 1;
  if (Status s = WriteManifest(args.outdir, m); !s.ok()) return ReportError(s.error());
  std::cout << fmt::format("merged {} folders: {} configurations of sweep {}\n", inputs.size(),
                           first.configurations, first.name);
  const Status reported =
      ReportSweep(merged, first.name, args.outdir, args.html, args.top, std::cout);
  if (!reported.ok()) return ReportError(reported.error());
  return kOk;
}

}  // namespace meshsim::cli
