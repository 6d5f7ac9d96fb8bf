// Reading the reference tables of docs/*.md, for the tests that check them against the
// program (tests/unit/docs_reference_test.cc, tests/e2e/docs_reference_test.cc).
//
// The convention (docs/README.md): a line `<!-- reference: SET -->` is followed by a
// Markdown table; the first cell of each of its rows is one name in backticks. A set may
// be split over several tables and files.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace meshsim::docs {

namespace fs = std::filesystem;

struct DocRow {
  std::string key;                 // the first cell, without its backticks
  std::vector<std::string> cells;  // every cell, trimmed (cells[0] is the key's cell)
  std::string file;                // "docs/yaml.md"
  int line = 0;
};

struct DocTables {
  std::map<std::string, std::vector<DocRow>> sets;  // SET -> its rows, in file order
  std::vector<std::string> errors;                  // malformed markers, rows, duplicates

  const DocRow* Find(const std::string& set, const std::string& key) const {
    auto it = sets.find(set);
    if (it == sets.end()) return nullptr;
    for (const DocRow& row : it->second) {
      if (row.key == key) return &row;
    }
    return nullptr;
  }
  std::set<std::string> Keys(const std::string& set) const {
    std::set<std::string> keys;
    auto it = sets.find(set);
    if (it != sets.end()) {
      for (const DocRow& row : it->second) keys.insert(row.key);
    }
    return keys;
  }
  // The file that documents `set` (its first table), or where a new table for it belongs.
  std::string FileOf(const std::string& set) const {
    auto it = sets.find(set);
    if (it != sets.end() && !it->second.empty()) return it->second.front().file;
    if (set.rfind("cli", 0) == 0) return "docs/cli.md";
    const bool sweep_yaml = set.rfind("sweep", 0) == 0 && set != "sweep.json";
    if (set == "experiment" || set == "model" || set == "cluster" || sweep_yaml) {
      return "docs/yaml.md";
    }
    return "docs/outputs.md";
  }
};

inline std::string Trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  const size_t b = s.find_last_not_of(" \t");
  return s.substr(a, b - a + 1);
}

// The cells of a Markdown table row "| a | b |" (an escaped \| stays inside its cell).
inline std::vector<std::string> SplitRow(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  const std::string body = Trim(line);
  for (size_t i = 1; i < body.size(); ++i) {  // skip the leading '|'
    if (body[i] == '\\' && i + 1 < body.size() && body[i + 1] == '|') {
      cell += '|';
      ++i;
    } else if (body[i] == '|') {
      cells.push_back(Trim(cell));
      cell.clear();
    } else {
      cell += body[i];
    }
  }
  if (!Trim(cell).empty()) cells.push_back(Trim(cell));
  return cells;
}

// Reads every docs/*.md under `repo` (names in rows and errors are relative to `repo`).
inline DocTables ReadDocTables(const fs::path& repo) {
  DocTables t;
  static const std::regex marker(R"(^\s*<!--\s*reference:\s*(.*?)\s*-->\s*$)");
  static const std::regex key_cell(R"(^`([^`]+)`$)");
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(repo / "docs")) {
    if (entry.path().extension() == ".md") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& path : files) {
    const std::string name = fs::relative(path, repo).generic_string();
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    for (size_t i = 0; i < lines.size(); ++i) {
      std::smatch m;
      if (!std::regex_match(lines[i], m, marker)) continue;
      const std::string set = m[1];
      const int marker_line = static_cast<int>(i) + 1;
      size_t j = i + 1;
      while (j < lines.size() && Trim(lines[j]).empty()) ++j;
      if (j + 1 >= lines.size() || Trim(lines[j]).rfind('|', 0) != 0 ||
          Trim(lines[j + 1]).rfind("|-", 0) != 0) {
        t.errors.push_back(name + ":" + std::to_string(marker_line) + ": the marker for '" + set +
                           "' is not followed by a table (a header row and a |---| row)");
        continue;
      }
      t.sets[set];  // a set with an empty table still exists
      for (j += 2; j < lines.size() && Trim(lines[j]).rfind('|', 0) == 0; ++j) {
        DocRow row;
        row.cells = SplitRow(lines[j]);
        row.file = name;
        row.line = static_cast<int>(j) + 1;
        std::smatch k;
        const std::string first = row.cells.empty() ? "" : row.cells[0];
        if (!std::regex_match(first, k, key_cell)) {
          t.errors.push_back(name + ":" + std::to_string(row.line) + ": table '" + set +
                             "': the first cell of a row must be one name in backticks, found '" +
                             first + "'");
          continue;
        }
        row.key = k[1];
        if (t.Find(set, row.key)) {
          t.errors.push_back(name + ":" + std::to_string(row.line) + ": table '" + set + "': `" +
                             row.key + "` is listed twice");
          continue;
        }
        t.sets[set].push_back(std::move(row));
      }
      i = j - 1;
    }
  }
  return t;
}

// Compares what the program has (`actual`: name -> the set its row belongs in) with the
// union of the documented `sets`, both ways. Returns one message per difference, saying
// what to add or remove where. `what` names the kind of name ("YAML key", "option of
// `meshsim run`"); `source` says where the program's names came from, as a noun phrase
// ("`meshsim run --help`", "what the sweep loader reads").
inline std::vector<std::string> CompareWithDocs(const DocTables& t, const std::string& what,
                                                const std::map<std::string, std::string>& actual,
                                                const std::vector<std::string>& sets,
                                                const std::string& source) {
  std::vector<std::string> out;
  for (const auto& [key, set] : actual) {
    bool found = false;
    for (const std::string& s : sets) found = found || t.Find(s, key) != nullptr;
    if (!found) {
      out.push_back(what + " `" + key + "`, found in " + source +
                    ", is not documented: add a row for it (first cell `" + key +
                    "`) to a table under <!-- reference: " + set + " --> in " + t.FileOf(set));
    }
  }
  for (const std::string& s : sets) {
    auto it = t.sets.find(s);
    if (it == t.sets.end()) continue;
    for (const DocRow& row : it->second) {
      if (!actual.count(row.key)) {
        out.push_back(row.file + ":" + std::to_string(row.line) + ": " + what + " `" + row.key +
                      "` is documented in table '" + s + "' but is not found in " + source +
                      ": remove the row, or fix its name");
      }
    }
  }
  return out;
}

inline std::string JoinLines(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += "\n  " + l;
  return s;
}

}  // namespace meshsim::docs
