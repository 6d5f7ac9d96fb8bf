#include "sim/sweep/merge.h"

#include <fmt/format.h>

#include <filesystem>
#include <numeric>

#include "sim/sweep/runner.h"

namespace meshsim {
namespace {

namespace fs = std::filesystem;

InputError Bad(const std::string& message) {
  InputError e;
  e.key = "merge";
  e.message = message;
  return e;
}

struct Shard {
  std::string dir;
  SweepManifest manifest;
  ParsedResults results;
};

Result<Shard> ReadShard(const std::string& dir) {
  Result<SweepManifest> m = ReadManifest(dir);
  if (!m.ok()) return m.error();
  Result<ParsedResults> t = ReadResultsCsv((fs::path(dir) / "results.csv").string());
  if (!t.ok()) return t.error();
  return Shard{dir, std::move(m).value(), std::move(t).value()};
}

// A shard that holds another sweep, or other columns, than the first.
std::optional<InputError> Mismatch(const Shard& first, const Shard& in) {
  const SweepManifest &m = in.manifest, &f = first.manifest;
  if (m.fingerprint != f.fingerprint || m.configurations != f.configurations || m.name != f.name) {
    return Bad(
        fmt::format("{} holds sweep {} (fingerprint {}, {} configurations) but {} holds sweep {} "
                    "(fingerprint {}, {} configurations)",
                    in.dir, m.name, m.fingerprint, m.configurations, first.dir, f.name,
                    f.fingerprint, f.configurations));
  }
  if (ResultColumns(in.results.table.axis_keys) != f.columns || m.columns != f.columns) {
    return Bad(in.dir + "/results.csv: its columns differ from the sweep's");
  }
  return std::nullopt;
}

// "3 of 12 configurations missing: 1, 5, 9 (configuration 1 belongs to shard 1/4; ...)".
InputError Missing(const std::vector<int64_t>& missing, const SweepManifest& m) {
  std::string list;
  for (size_t k = 0; k < std::min<size_t>(missing.size(), 10); ++k) {
    list += (k ? ", " : "") + std::to_string(missing[k]);
  }
  if (missing.size() > 10) list += ", ...";
  std::string hint;
  if (m.shard_count > 1) {
    hint = fmt::format(
        " (configuration {} belongs to shard {}/{}; was it run to the end, and is its folder "
        "among the inputs?)",
        missing.front(), missing.front() % m.shard_count, m.shard_count);
  }
  return Bad(fmt::format("{} of {} configurations missing: {}{}", missing.size(), m.configurations,
                         list, hint));
}

}  // namespace

Result<MergedSweep> MergeShards(const std::vector<std::string>& dirs) {
  if (dirs.empty()) return Bad("no shard folders given");
  std::vector<Shard> shards;
  for (const std::string& dir : dirs) {
    Result<Shard> s = ReadShard(dir);
    if (!s.ok()) return s.error();
    shards.push_back(std::move(s).value());
    if (auto e = Mismatch(shards.front(), shards.back())) return *e;
  }
  const SweepManifest& first = shards.front().manifest;
  // Every configuration exactly once: where[config] = (shard, row).
  std::vector<std::pair<int, size_t>> where(first.configurations, {-1, 0});
  for (size_t i = 0; i < shards.size(); ++i) {
    const ParsedResults& t = shards[i].results;
    for (size_t r = 0; r < t.table.rows.size(); ++r) {
      const int64_t idx = t.table.rows[r].config;
      if (idx < 0 || idx >= first.configurations) {
        return Bad(
            fmt::format("{}/results.csv line {}: '{}' is not a configuration of this sweep "
                        "(0..{})",
                        shards[i].dir, t.lines[r], idx, first.configurations - 1));
      }
      if (where[idx].first >= 0) {
        const Shard& other = shards[where[idx].first];
        return Bad(fmt::format(
            "configuration {} appears twice: {}/results.csv line {} and {}/results.csv line {}",
            idx, other.dir, other.results.lines[where[idx].second], shards[i].dir, t.lines[r]));
      }
      where[idx] = {static_cast<int>(i), r};
    }
  }
  std::vector<int64_t> missing;
  for (int64_t idx = 0; idx < first.configurations; ++idx) {
    if (where[idx].first < 0) missing.push_back(idx);
  }
  if (!missing.empty()) return Missing(missing, first);

  MergedSweep merged;
  merged.manifest = first;
  merged.manifest.shard_index = 0;
  merged.manifest.shard_count = 1;
  merged.table.axis_keys = shards.front().results.table.axis_keys;
  for (const auto& [shard, row] : where) {
    merged.table.rows.push_back(std::move(shards[shard].results.table.rows[row]));
  }
  return merged;
}

Status WriteMergedSweep(const std::string& outdir, const MergedSweep& merged) {
  std::vector<size_t> all(merged.table.rows.size());
  std::iota(all.begin(), all.end(), 0);
  const std::string csv = (fs::path(outdir) / "results.csv").string();
  if (Status s = WriteResultsCsv(csv, merged.table, all); !s.ok()) return s;
  return WriteManifest(outdir, merged.manifest);
}

}  // namespace meshsim
