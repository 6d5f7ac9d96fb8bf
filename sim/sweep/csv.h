// CSV records (RFC 4180): cells quoted when they hold a comma, a quote or a line break.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/status.h"

namespace meshsim {

using CsvRecord = std::vector<std::string>;

// One record, with its trailing newline.
std::string CsvLine(const CsvRecord& cells);

struct CsvText {
  CsvRecord header;
  std::vector<CsvRecord> records;  // every record after the header
  std::vector<int> lines;          // the 1-based line each record starts on
  // Bytes of the text up to the end of its last complete record; less than the text's
  // size when a partially written last record was dropped.
  uint64_t complete_bytes = 0;
  bool dropped_partial_line = false;
};

// Parses CSV text. A last record without its newline is dropped (an interrupted write).
// Fails on an empty text, or a record whose cell count differs from the header's.
Result<CsvText> ParseCsv(const std::string& text, const std::string& origin);
// The same for a file. A missing file is bad input; one that cannot be read, an I/O error.
Result<CsvText> ReadCsvFile(const std::string& path);

}  // namespace meshsim
