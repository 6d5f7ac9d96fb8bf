// A CSV file read by column name, as a user's script would read results.csv (the tests
// check the file, not meshsim's own typed reading of it).
#pragma once

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>

#include "sim/sweep/csv.h"

namespace meshsim::e2e {

struct CsvTable {
  CsvRecord header;
  std::vector<CsvRecord> rows;

  int Column(const std::string& name) const {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) return static_cast<int>(i);
    }
    return -1;
  }
  const std::string& Cell(size_t row, int column) const {
    static const std::string empty;
    if (column < 0 || row >= rows.size()) return empty;
    return rows[row][column];
  }
  std::optional<double> Number(size_t row, int column) const {
    const std::string& s = Cell(row, column);
    if (s.empty()) return std::nullopt;
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (errno != 0 || *end != '\0') return std::nullopt;
    return v;
  }
};

inline Result<CsvTable> ReadCsvTable(const std::string& path) {
  Result<CsvText> t = ReadCsvFile(path);
  if (!t.ok()) return t.error();
  return CsvTable{t.value().header, t.value().records};
}

}  // namespace meshsim::e2e
