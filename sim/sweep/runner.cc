#include "sim/sweep/runner.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "sim/core/atomic_file.h"

namespace meshsim {
namespace {

namespace fs = std::filesystem;

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Evaluates one configuration; a failure inside the library becomes an `error` row
// rather than ending the whole sweep.
std::pair<ResultRow, RowInfo> EvaluateRow(const SweepSpec& spec, const Configuration& c,
                                          const AvailableMemory& memory) {
  const auto t0 = std::chrono::steady_clock::now();
  Evaluation ev;
  try {
    ev = Evaluate(ConfigurationExperiment(spec, c), c.invalid, memory);
  } catch (const std::exception& ex) {
    ev = Evaluation{};
    ev.status = ConfigStatus::kError;
    ev.message = std::string("internal error: ") + ex.what();
  }
  RowInfo info;
  info.status = ev.status;
  info.simulated = ev.simulated;
  ResultRow row = MakeResultRow(spec, c, std::move(ev));
  info.seconds = SecondsSince(t0);
  return {std::move(row), info};
}

// The rows an earlier run of this sweep and shard left in results.csv, checked against
// the manifest it wrote. Marks their configurations done.
struct Resumed {
  ParsedResults results;
  int64_t count = 0;
};
Result<Resumed> LoadResumed(const std::string& outdir, const SweepManifest& manifest,
                            std::vector<bool>* done) {
  const std::string csv_path = (fs::path(outdir) / "results.csv").string();
  if (fs::exists(fs::path(outdir) / "sweep.json")) {
    Result<SweepManifest> old = ReadManifest(outdir);
    if (!old.ok()) return old.error();
    const SweepManifest& m = old.value();
    if (m.fingerprint != manifest.fingerprint || m.configurations != manifest.configurations) {
      return BadInput(csv_path,
                      "--resume: these rows come from another sweep (" + m.name + ", fingerprint " +
                          m.fingerprint + ", " + std::to_string(m.configurations) +
                          " configurations); this sweep is " + manifest.name + ", fingerprint " +
                          manifest.fingerprint + ", " + std::to_string(manifest.configurations) +
                          "; use another -o folder");
    }
    if (m.shard_index != manifest.shard_index || m.shard_count != manifest.shard_count) {
      return BadInput(csv_path, "--resume: these rows are shard " + std::to_string(m.shard_index) +
                                    "/" + std::to_string(m.shard_count) + ", not " +
                                    std::to_string(manifest.shard_index) + "/" +
                                    std::to_string(manifest.shard_count));
    }
  }
  Result<ParsedResults> parsed = ReadResultsCsv(csv_path);
  if (!parsed.ok()) {
    InputError e = parsed.error();
    e.message = "--resume: " + e.message;
    return e;
  }
  Resumed r{std::move(parsed).value(), 0};
  if (ResultColumns(r.results.table.axis_keys) != manifest.columns) {
    return BadInput(csv_path, "--resume: the header differs from this sweep's columns");
  }
  for (size_t i = 0; i < r.results.table.rows.size(); ++i) {
    const int64_t idx = r.results.table.rows[i].config;
    if (idx < 0 || idx >= manifest.configurations ||
        idx % manifest.shard_count != manifest.shard_index) {
      return BadInput(csv_path, "--resume: row " + std::to_string(r.results.lines[i]) +
                                    " names configuration '" + std::to_string(idx) +
                                    "', which is not one of this shard's");
    }
    if ((*done)[idx]) {
      return BadInput(csv_path,
                      "--resume: configuration " + std::to_string(idx) + " appears twice");
    }
    (*done)[idx] = true;
    ++r.count;
  }
  return r;
}

// results.csv open for appending: each row is written and flushed as it comes.
class RowWriter {
 public:
  RowWriter(const RowWriter&) = delete;
  RowWriter& operator=(const RowWriter&) = delete;
  ~RowWriter() {
    if (file_) std::fclose(file_);
  }
  // Opens `path`, truncated with a header or (append) after the existing rows.
  static Result<std::unique_ptr<RowWriter>> Open(const std::string& path,
                                                 const std::vector<std::string>& header,
                                                 bool append) {
    std::FILE* f = std::fopen(path.c_str(), append ? "ab" : "wb");
    if (!f) return IoError(path, "cannot write the file: " + std::string(std::strerror(errno)));
    std::unique_ptr<RowWriter> w(new RowWriter(path, f));
    if (!append) w->Write(CsvLine(header));
    return w;
  }
  void Write(const std::string& line) {
    if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
      failed_ = true;
    }
  }
  // Closes the file; an I/O error if any write failed.
  Status Close() {
    const bool close_failed = std::fclose(file_) != 0;
    file_ = nullptr;
    if (failed_ || close_failed) return IoError(path_, "cannot write the file (disk full?)");
    return Ok{};
  }

 private:
  RowWriter(std::string path, std::FILE* f) : path_(std::move(path)), file_(f) {}
  std::string path_;
  std::FILE* file_;
  bool failed_ = false;
};

void Count(const RowInfo& info, SweepProgress* p) {
  ++p->done;
  ++p->by_status[static_cast<int>(info.status)];
  if (info.simulated) {
    ++p->simulated;
    p->simulated_s += info.seconds;
  } else {
    p->other_s += info.seconds;
  }
}

SweepManifest ManifestOf(const SweepSpec& spec, const std::vector<Configuration>& configs,
                         const SweepRunOptions& o) {
  SweepManifest m;
  m.name = spec.name;
  m.fingerprint = Fingerprint(spec, configs);
  m.configurations = static_cast<int64_t>(configs.size());
  m.shard_index = o.shard_index;
  m.shard_count = o.shard_count;
  m.columns = ResultColumns(NonPlanAxisKeys(spec));
  return m;
}

}  // namespace

void EvaluateInOrder(const SweepSpec& spec, const std::vector<Configuration>& configs,
                     const std::vector<size_t>& todo, int threads, const RowSink& sink) {
  std::atomic<size_t> next{0};
  std::mutex mu;
  size_t next_out = 0;
  std::map<size_t, std::pair<ResultRow, RowInfo>> waiting;  // finished out of order
  // Read once, so that every configuration meets the same limit whatever the threads.
  const AvailableMemory memory = ReadAvailableMemory();
  auto work = [&] {
    while (true) {
      const size_t i = next.fetch_add(1);
      if (i >= todo.size()) return;
      auto done = EvaluateRow(spec, configs[todo[i]], memory);
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

Result<SweepRunResult> RunSweep(const SweepSpec& spec, const std::vector<Configuration>& configs,
                                const SweepRunOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const fs::path outdir(o.outdir);
  std::error_code ec;
  fs::create_directories(outdir, ec);
  if (!fs::is_directory(outdir)) {
    return IoError(o.outdir, "cannot create the output folder: " + ec.message());
  }
  const SweepManifest manifest = ManifestOf(spec, configs, o);
  SweepRunResult result;
  result.results_csv = (outdir / "results.csv").string();
  result.table.axis_keys = NonPlanAxisKeys(spec);
  std::vector<bool> done(configs.size(), false);
  const bool resuming = o.resume && fs::exists(result.results_csv);
  if (resuming) {
    Result<Resumed> resumed = LoadResumed(o.outdir, manifest, &done);
    if (!resumed.ok()) return resumed.error();
    result.table.rows = std::move(resumed.value().results.table.rows);
    result.progress.resumed = resumed.value().count;
    // Drop a partially written last line before appending.
    if (resumed.value().results.dropped_partial_line) {
      fs::resize_file(result.results_csv, resumed.value().results.complete_bytes, ec);
      if (ec)
        return IoError(result.results_csv,
                       "cannot truncate the partial last line: " + ec.message());
    }
  }
  if (Status s = WriteManifest(o.outdir, manifest); !s.ok()) return s.error();
  Result<std::unique_ptr<RowWriter>> writer =
      RowWriter::Open(result.results_csv, manifest.columns, resuming);
  if (!writer.ok()) return writer.error();

  std::vector<size_t> todo;
  for (size_t i = o.shard_index; i < configs.size(); i += o.shard_count) {
    ++result.progress.total;
    if (!done[i]) todo.push_back(i);
  }
  result.progress.done = result.progress.resumed;
  EvaluateInOrder(spec, configs, todo, o.threads, [&](size_t, ResultRow row, const RowInfo& info) {
    writer.value()->Write(CsvLine(FormatRow(row)));
    result.table.rows.push_back(std::move(row));
    Count(info, &result.progress);
    if (o.progress) o.progress(result.progress);
  });
  if (Status s = writer.value()->Close(); !s.ok()) return s.error();
  result.wall_s = SecondsSince(t0);
  return result;
}

Status WriteResultsCsv(const std::string& path, const ResultTable& table,
                       const std::vector<size_t>& rows) {
  return WriteFileAtomically(path, ResultsCsv(table, rows));
}

}  // namespace meshsim
