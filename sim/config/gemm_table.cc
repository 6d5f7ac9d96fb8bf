#include "sim/config/gemm_table.h"

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sim/sweep/csv.h"

namespace meshsim::config {
namespace {

enum Column { kM, kN, kK, kBatch, kDtype, kTflops, kColumns };
constexpr std::array<const char*, kColumns> kNames = {"m", "n", "k", "batch", "dtype", "tflops"};

InputError TableError(const std::string& path, int line, const std::string& key,
                      const std::string& message) {
  InputError e;
  e.file = path;
  e.line = line;
  e.key = key;
  e.message = message;
  return e;
}

// The position of each column in the header; -1 for an absent optional one.
Result<std::array<int, kColumns>> Columns(const CsvRecord& header, const std::string& path,
                                          const std::string& key) {
  std::array<int, kColumns> at;
  at.fill(-1);
  for (size_t i = 0; i < header.size(); ++i) {
    int c = 0;
    while (c < kColumns && header[i] != kNames[c]) ++c;
    if (c == kColumns || at[c] >= 0) {
      return TableError(path, 1, key,
                        "expected the columns m, n, k, dtype, tflops (and optionally batch), each "
                        "once, found '" +
                            header[i] + "'");
    }
    at[c] = static_cast<int>(i);
  }
  for (int c : {kM, kN, kK, kDtype, kTflops}) {
    if (at[c] < 0) {
      return TableError(
          path, 1, key,
          std::string("expected a column '") + kNames[c] + "' in the header, found none");
    }
  }
  return at;
}

// A positive number; `integral`: a whole one.
bool Positive(const std::string& s, bool integral, double* out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(v) || !(v > 0)) return false;
  if (integral && v != std::floor(v)) return false;
  *out = v;
  return true;
}

Result<GemmMeasurement> Row(const CsvRecord& r, int line, const std::array<int, kColumns>& at,
                            const std::string& path, const std::string& key) {
  GemmMeasurement g;
  std::array<double*, kColumns> numbers = {&g.m, &g.n, &g.k, &g.batch, nullptr, &g.tflops};
  for (int c = 0; c < kColumns; ++c) {
    if (at[c] < 0) continue;
    const std::string& cell = r[at[c]];
    if (c == kDtype) {
      if (cell == "bf16")
        g.dtype = Dtype::kBf16;
      else if (cell == "fp16")
        g.dtype = Dtype::kFp16;
      else if (cell == "fp8")
        g.dtype = Dtype::kFp8;
      else
        return TableError(path, line, key,
                          "expected dtype bf16 | fp16 | fp8, found '" + cell + "'");
      continue;
    }
    if (!Positive(cell, c != kTflops, numbers[c])) {
      return TableError(path, line, key,
                        std::string("expected ") + kNames[c] +
                            (c == kTflops ? " a positive number" : " a positive integer") +
                            ", found '" + cell + "'");
    }
  }
  return g;
}

}  // namespace

Result<std::vector<GemmMeasurement>> LoadGemmTable(const std::string& path,
                                                   const std::string& key) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    InputError e =
        TableError(path, 0, key, std::string("cannot open file: ") + std::strerror(errno));
    if (errno != ENOENT) e.kind = ErrorKind::kIo;
    return e;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (!text.empty() && text.back() != '\n') text += '\n';  // a hand-written last line
  Result<CsvText> csv = ParseCsv(text, path);
  if (!csv.ok()) {
    InputError e = csv.error();
    e.key = key;
    return e;
  }
  Result<std::array<int, kColumns>> at = Columns(csv.value().header, path, key);
  if (!at.ok()) return at.error();
  std::vector<GemmMeasurement> rows;
  for (size_t i = 0; i < csv.value().records.size(); ++i) {
    Result<GemmMeasurement> g =
        Row(csv.value().records[i], csv.value().lines[i], at.value(), path, key);
    if (!g.ok()) return g.error();
    rows.push_back(g.value());
  }
  return rows;
}

}  // namespace meshsim::config
