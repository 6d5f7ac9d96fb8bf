#include "sim/sweep/runner.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "sim/core/atomic_file.h"

namespace meshsim {
namespace {

namespace fs = std::filesystem;

InputError FileError(const std::string& path, const std::string& message) {
  InputError e;
  e.file = path;
  e.message = message;
  return e;
}

// Evaluates one configuration; a failure inside the library becomes an `error` row
// rather than ending the whole sweep.
std::pair<CsvRow, RowInfo> EvaluateRow(const SweepSpec& spec, const Configuration& c,
                                       const std::vector<std::string>& columns) {
  const auto t0 = std::chrono::steady_clock::now();
  Evaluation ev;
  try {
    ev = Evaluate(ConfigurationExperiment(spec, c), c.invalid);
  } catch (const std::exception& ex) {
    ev = Evaluation{};
    ev.status = ConfigStatus::kError;
    ev.message = std::string("internal error: ") + ex.what();
  }
  CsvRow row = ResultRow(spec, columns, c, ev);
  RowInfo info;
  info.status = ev.status;
  info.simulated = ev.simulated;
  info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {std::move(row), info};
}

}  // namespace

void EvaluateInOrder(const SweepSpec& spec, const std::vector<Configuration>& configs,
                     const std::vector<std::string>& columns, const std::vector<size_t>& todo,
                     int threads, const RowSink& sink) {
  std::atomic<size_t> next{0};
  std::mutex mu;
  size_t next_out = 0;
  std::map<size_t, std::pair<CsvRow, RowInfo>> waiting;  // finished out of order
  auto work = [&] {
    while (true) {
      const size_t i = next.fetch_add(1);
      if (i >= todo.size()) return;
      auto done = EvaluateRow(spec, configs[todo[i]], columns);
      std::lock_guard<std::mutex> lock(mu);
      if (i != next_out) {
        waiting.emplace(i, std::move(done));
        continue;
      }
      sink(i, std::move(done.first), done.second);
      ++next_out;
      for (auto it = waiting.begin(); it != waiting.end() && it->first == next_out;
           it = waiting.erase(it)) {
        sink(it->first, std::move(it->second.first), it->second.second);
        ++next_out;
      }
    }
  };
  const int n = std::max(1, std::min<int>(threads, static_cast<int>(todo.size())));
  if (n <= 1) {
    work();
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(n);
  for (int t = 0; t < n; ++t) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
}

Result<SweepManifest> ReadManifest(const std::string& outdir) {
  const std::string path = (fs::path(outdir) / "sweep.json").string();
  std::ifstream in(path);
  if (!in) return FileError(path, "cannot open file: " + std::string(std::strerror(errno)));
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    SweepManifest m;
    m.name = j.at("sweep").get<std::string>();
    m.fingerprint = j.at("fingerprint").get<std::string>();
    m.configurations = j.at("configurations").get<int64_t>();
    m.shard_index = j.at("shard").at("index").get<int>();
    m.shard_count = j.at("shard").at("count").get<int>();
    m.columns = j.at("columns").get<std::vector<std::string>>();
    return m;
  } catch (const nlohmann::json::exception& ex) {
    return FileError(path, std::string("not a meshsim sweep manifest: ") + ex.what());
  }
}

Status WriteManifest(const std::string& outdir, const SweepManifest& m) {
  nlohmann::ordered_json j;
  j["sweep"] = m.name;
  j["fingerprint"] = m.fingerprint;
  j["configurations"] = m.configurations;
  j["shard"] = {{"index", m.shard_index}, {"count", m.shard_count}};
  j["columns"] = m.columns;
  return WriteFileAtomically((fs::path(outdir) / "sweep.json").string(), j.dump(2) + "\n");
}

Result<SweepRunResult> RunSweep(const SweepSpec& spec, const std::vector<Configuration>& configs,
                                const SweepRunOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<std::string> columns = ResultColumns(spec);
  const fs::path outdir(o.outdir);
  const std::string csv_path = (outdir / "results.csv").string();
  std::error_code ec;
  fs::create_directories(outdir, ec);
  if (!fs::is_directory(outdir)) {
    return IoError(o.outdir, "cannot create the output folder: " + ec.message());
  }

  SweepManifest manifest;
  manifest.name = spec.name;
  manifest.fingerprint = Fingerprint(spec, configs);
  manifest.configurations = static_cast<int64_t>(configs.size());
  manifest.shard_index = o.shard_index;
  manifest.shard_count = o.shard_count;
  manifest.columns = columns;

  // This shard's configurations, and those an earlier run already wrote.
  std::vector<size_t> shard;
  for (size_t i = 0; i < configs.size(); ++i) {
    if (static_cast<int64_t>(i % o.shard_count) == o.shard_index) shard.push_back(i);
  }
  std::vector<bool> done(configs.size(), false);
  SweepRunResult result;
  result.results_csv = csv_path;
  result.progress.total = static_cast<int64_t>(shard.size());

  const bool resuming = o.resume && fs::exists(csv_path);
  if (resuming) {
    if (fs::exists(outdir / "sweep.json")) {
      Result<SweepManifest> old = ReadManifest(o.outdir);
      if (!old.ok()) return old.error();
      const SweepManifest& m = old.value();
      if (m.fingerprint != manifest.fingerprint || m.configurations != manifest.configurations) {
        return FileError(
            csv_path, "--resume: these rows come from another sweep (" + m.name + ", fingerprint " +
                          m.fingerprint + ", " + std::to_string(m.configurations) +
                          " configurations); this sweep is " + spec.name + ", fingerprint " +
                          manifest.fingerprint + ", " + std::to_string(manifest.configurations) +
                          "; use another -o folder");
      }
      if (m.shard_index != o.shard_index || m.shard_count != o.shard_count) {
        return FileError(
            csv_path, "--resume: these rows are shard " + std::to_string(m.shard_index) + "/" +
                          std::to_string(m.shard_count) + ", not " + std::to_string(o.shard_index) +
                          "/" + std::to_string(o.shard_count));
      }
    }
    Result<CsvTable> old = ReadCsvFile(csv_path);
    if (!old.ok()) return old.error();
    const CsvTable& t = old.value();
    if (t.header != columns) {
      return FileError(csv_path, "--resume: the header differs from this sweep's columns");
    }
    for (size_t r = 0; r < t.rows.size(); ++r) {
      const std::string& cell = t.rows[r][0];
      char* end = nullptr;
      const long long idx = std::strtoll(cell.c_str(), &end, 10);
      if (cell.empty() || *end != '\0' || idx < 0 ||
          idx >= static_cast<long long>(configs.size()) ||
          static_cast<int64_t>(idx % o.shard_count) != o.shard_index) {
        InputError e = FileError(csv_path, "--resume: row " + std::to_string(r + 2) +
                                               " names configuration '" + cell +
                                               "', which is not one of this shard's");
        return e;
      }
      if (done[idx]) {
        return FileError(csv_path, "--resume: configuration " + cell + " appears twice");
      }
      done[idx] = true;
      ++result.progress.resumed;
    }
    // Drop a partially written last line before appending.
    if (t.dropped_partial_line) fs::resize_file(csv_path, t.complete_bytes, ec);
    if (ec) return IoError(csv_path, "cannot truncate the partial last line: " + ec.message());
  }
  if (Status s = WriteManifest(o.outdir, manifest); !s.ok()) return s.error();

  std::FILE* out = std::fopen(csv_path.c_str(), resuming ? "ab" : "wb");
  if (!out) return IoError(csv_path, "cannot write the file: " + std::string(std::strerror(errno)));
  if (!resuming) {
    const std::string header = CsvLine(columns);
    std::fwrite(header.data(), 1, header.size(), out);
    std::fflush(out);
  }

  std::vector<size_t> todo;
  for (size_t i : shard) {
    if (!done[i]) todo.push_back(i);
  }
  result.progress.done = result.progress.resumed;
  bool write_failed = false;
  EvaluateInOrder(
      spec, configs, columns, todo, o.threads, [&](size_t, CsvRow row, const RowInfo& info) {
        const std::string line = CsvLine(row);
        if (std::fwrite(line.data(), 1, line.size(), out) != line.size() || std::fflush(out) != 0) {
          write_failed = true;
        }
        ++result.progress.done;
        ++result.progress.by_status[static_cast<int>(info.status)];
        if (info.simulated) {
          ++result.progress.simulated;
          result.progress.simulated_s += info.seconds;
        } else {
          result.progress.other_s += info.seconds;
        }
        if (o.progress) o.progress(result.progress);
      });
  const bool close_failed = std::fclose(out) != 0;
  if (write_failed || close_failed) return IoError(csv_path, "cannot write the file (disk full?)");
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace meshsim
