#include "sim/config/import_hf_fields.h"

#include <algorithm>
#include <tuple>

namespace meshsim::hf_internal {

std::pair<int, int> LineColumn(const std::string& text, size_t offset) {
  offset = std::min(offset, text.size());
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, static_cast<int>(offset - line_start) + 1};
}

std::string Describe(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return v.get<bool>() ? "true" : "false";
    case json::value_t::string:
      return "the string " + v.dump();
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "a list";
    default:
      return v.dump();  // numbers
  }
}

json ParseJson(const std::string& text, const std::string& file) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    InputError err;
    err.file = file;
    // e.byte: 1-based index of the last character read (size + 1 at the end of input).
    const size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    std::tie(err.line, err.column) = LineColumn(text, offset);
    // "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error..."
    std::string what = e.what();
    const size_t at = what.find("parse error");
    const size_t colon = at == std::string::npos ? std::string::npos : what.find(": ", at);
    err.message = "invalid JSON: " + (colon == std::string::npos ? what : what.substr(colon + 2));
    throw ImportFailure{err};
  } catch (const json::exception& e) {
    // Valid syntax that nlohmann::json cannot hold: "[json.exception.out_of_range.406]
    // number overflow parsing '1e400'". No position comes with it: point at the first
    // occurrence of the quoted text.
    InputError err;
    err.file = file;
    const std::string what = e.what();
    const size_t bracket = what.find("] ");
    err.message =
        "invalid JSON: " + (bracket == std::string::npos ? what : what.substr(bracket + 2));
    const size_t open = what.find('\''), close = what.rfind('\'');
    if (open != std::string::npos && close > open + 1) {
      const size_t at = text.find(what.substr(open + 1, close - open - 1));
      if (at != std::string::npos) std::tie(err.line, err.column) = LineColumn(text, at);
    }
    throw ImportFailure{err};
  }
}

}  // namespace meshsim::hf_internal
