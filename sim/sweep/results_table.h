// results.csv: one row per configuration (SPEC.md "Sweeps").
//
// Columns, in order: `config` (the configuration index), `status` (ok | oom | invalid |
// error), the axes that are not plan columns (their value as written), the plan columns
// (plan.tp ... plan.sequence_parallel, always present so that every row says what ran),
// the memory bound (est_*_gib, for every valid plan) and the budget, the summary's
// scalar keys (summary.json's names; nested objects flattened with dots; empty unless
// simulated), and `message` (why invalid or oom). The summary's host measurements
// (sim.wall_s, sim.events_per_s, sim.peak_rss_mib) are left out so that the file is
// deterministic. Cells follow RFC 4180 (quoted when they hold a comma, quote or newline).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/sweep/enumerate.h"
#include "sim/sweep/evaluate.h"

namespace meshsim {

using CsvRow = std::vector<std::string>;

// The summary's deterministic scalar keys, flattened ("memory_breakdown_gib.weights").
const std::vector<std::string>& SummaryColumns();
// The plan fields every row carries.
const std::vector<std::string>& PlanColumns();

std::vector<std::string> ResultColumns(const SweepSpec& spec);
CsvRow ResultRow(const SweepSpec& spec, const std::vector<std::string>& columns,
                 const Configuration& c, const Evaluation& ev);

// The value of a summary key as a CSV cell; `key` is dotted. Empty if absent.
std::string SummaryCell(const nlohmann::ordered_json& summary, const std::string& key);

// One CSV record, with its trailing newline.
std::string CsvLine(const CsvRow& cells);

struct CsvTable {
  std::vector<std::string> header;
  std::vector<CsvRow> rows;
  // Bytes of the file up to the end of its last complete line; a shorter file length
  // than the file's size means a partially written last line was dropped.
  uint64_t complete_bytes = 0;
  bool dropped_partial_line = false;

  int Column(const std::string& name) const;  // -1 if absent
  const std::string& Cell(size_t row, int column) const;
  std::optional<double> Number(size_t row, int column) const;
};

// Parses CSV text. A last record without its newline is dropped (an interrupted write).
// Fails on a row whose cell count differs from the header's.
Result<CsvTable> ParseCsv(const std::string& text, const std::string& origin);
Result<CsvTable> ReadCsvFile(const std::string& path);

}  // namespace meshsim
