#include "sim/config/megatron_args.h"

#include <cassert>

namespace meshsim {
namespace megatron_internal {
namespace {

// A no-effect entry for the prefix families: their values run to the next flag.
const FlagInfo kPrefixNoEffect = {"", FlagArity::kList, FlagUse::kNoEffect, ""};

const std::map<std::string, const FlagInfo*>& Index() {
  static const std::map<std::string, const FlagInfo*> index = [] {
    std::map<std::string, const FlagInfo*> m;
    for (const FlagInfo& f : MegatronFlagTable()) {
      const bool fresh = m.emplace(f.name, &f).second;
      assert(fresh && "a flag appears twice in the table");
      (void)fresh;
    }
    return m;
  }();
  return index;
}

// The words after position `i` that belong to a flag of `arity` given without '=': up to
// one word (kOne), or every word up to the next flag (kList).
size_t ValueWords(const std::vector<std::string>& tokens, size_t i, FlagArity arity) {
  size_t n = 0;
  while (i + 1 + n < tokens.size() && tokens[i + 1 + n].rfind("--", 0) != 0) {
    ++n;
    if (arity != FlagArity::kList) break;
  }
  return arity == FlagArity::kSwitch ? 0 : n;
}

}  // namespace

const FlagInfo* FindMegatronFlag(const std::string& name) {
  const auto& index = Index();
  if (auto it = index.find(name); it != index.end()) return it->second;
  for (const std::string& prefix : MegatronNoEffectPrefixes()) {
    if (name.rfind(prefix, 0) == 0) return &kPrefixNoEffect;
  }
  return nullptr;
}

Words Classify(const std::vector<std::string>& tokens, MegatronImport* out) {
  Words w;
  std::vector<std::string> positional;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (t.rfind("--", 0) != 0 || t.size() == 2) {
      positional.push_back(t);
      continue;
    }
    const size_t eq = t.find('=');
    const std::string name = t.substr(0, eq);
    const bool inline_value = eq != std::string::npos;
    const FlagInfo* info = FindMegatronFlag(name);
    // Unknown flags take the next word unless it is a flag.
    const FlagArity arity = info ? info->arity : FlagArity::kOne;
    std::vector<std::string> value;
    if (inline_value) {
      value.push_back(t.substr(eq + 1));
    } else {
      const size_t n = ValueWords(tokens, i, arity);
      value.assign(tokens.begin() + static_cast<long>(i) + 1,
                   tokens.begin() + static_cast<long>(i + 1 + n));
      i += n;
    }
    std::string shown = name;
    for (const std::string& v : value) shown += " " + v;
    if (info == nullptr) {
      out->unknown.push_back(shown);
      continue;
    }
    if (info->use == FlagUse::kNoEffect) continue;
    if (info->use == FlagUse::kNotModelled) {
      out->not_modelled.push_back(shown + " is not modelled: " + info->assumption);
      continue;
    }
    if (arity == FlagArity::kSwitch) {
      if (inline_value) Fail(name, "takes no value, found '" + value[0] + "'");
      w.flags.insert(name);
    } else if (value.empty()) {
      Fail(name, "expects a value, found " + (i + 1 < tokens.size() ? "'" + tokens[i + 1] + "'"
                                                                    : "the end of the arguments"));
    } else {
      w.values[name] = value;
    }
  }
  if (!positional.empty()) {
    std::string list;
    for (const std::string& p : positional) list += (list.empty() ? "" : " ") + p;
    out->warnings.push_back("ignored words that are not flags: " + list);
  }
  return w;
}

}  // namespace megatron_internal

using megatron_internal::Fail;

Result<std::vector<std::string>> SplitShellWords(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < text.size() &&
                 (text[i + 1] == '"' || text[i + 1] == '\\' || text[i + 1] == '$')) {
        word += text[++i];
      } else {
        word += c;
      }
    } else if (c == '\\') {
      if (i + 1 < text.size() && text[i + 1] == '\n') {
        ++i;  // line continuation
      } else if (i + 1 < text.size()) {
        word += text[++i];
        in_word = true;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) {
    InputError e;
    e.file = kMegatronSource;
    e.message = std::string("unterminated ") + (quote == '"' ? "double" : "single") + " quote";
    return e;
  }
  if (in_word) words.push_back(word);
  return words;
}

}  // namespace meshsim
