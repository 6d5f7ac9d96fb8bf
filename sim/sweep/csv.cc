#include "sim/sweep/csv.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace meshsim {

std::string CsvLine(const CsvRecord& cells) {
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) out += ',';
    const std::string& c = cells[i];
    if (c.find_first_of(",\"\n\r") == std::string::npos) {
      out += c;
      continue;
    }
    out += '"';
    for (char ch : c) {
      if (ch == '"') out += '"';
      out += ch;
    }
    out += '"';
  }
  out += '\n';
  return out;
}

namespace {

// Splits `text` into records; `lines` gets the line each record starts on.
void SplitRecords(const std::string& text, CsvText* t, std::vector<CsvRecord>* records,
                  std::vector<int>* lines) {
  CsvRecord record;
  std::string cell;
  bool quoted = false, cell_started = false;
  int line = 1, record_line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        if (ch == '\n') ++line;
        cell += ch;
      }
      continue;
    }
    if (ch == '"' && !cell_started) {
      quoted = cell_started = true;
    } else if (ch == ',') {
      record.push_back(std::move(cell));
      cell.clear();
      cell_started = false;
    } else if (ch == '\n') {
      record.push_back(std::move(cell));
      cell.clear();
      cell_started = false;
      records->push_back(std::move(record));
      record.clear();
      lines->push_back(record_line);
      t->complete_bytes = i + 1;
      record_line = ++line;
    } else if (ch != '\r') {
      cell += ch;
      cell_started = true;
    }
  }
  t->dropped_partial_line = t->complete_bytes < text.size();
}

}  // namespace

Result<CsvText> ParseCsv(const std::string& text, const std::string& origin) {
  CsvText t;
  std::vector<CsvRecord> records;
  std::vector<int> lines;
  SplitRecords(text, &t, &records, &lines);
  if (records.empty()) {
    InputError e;
    e.file = origin;
    e.message = "expected a CSV header line, found an empty file";
    return e;
  }
  t.header = std::move(records.front());
  for (size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != t.header.size()) {
      InputError e;
      e.file = origin;
      e.line = lines[r];
      e.message = "expected " + std::to_string(t.header.size()) +
                  " cells as in the header, found " + std::to_string(records[r].size());
      return e;
    }
    t.records.push_back(std::move(records[r]));
    t.lines.push_back(lines[r]);
  }
  return t;
}

Result<CsvText> ReadCsvFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    // A missing file is the input's fault (a wrong folder named); anything else the host's.
    InputError e = IoError(path, std::string("cannot open file: ") + std::strerror(errno));
    if (errno == ENOENT) e.kind = ErrorKind::kBadInput;
    return e;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseCsv(ss.str(), path);
}

}  // namespace meshsim
