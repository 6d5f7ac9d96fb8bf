#include "sim/config/folder_name.h"

namespace meshsim::config {

bool IsFolderName(const std::string& name) {
  if (name.empty() || name.size() > 128 || name.front() == '.') return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-' || c == '+';
    if (!ok) return false;
  }
  return true;
}

void GetFolderName(YamlReader& r, const std::string& key, std::string* out) {
  r.GetString(key, out, true);
  if (IsFolderName(*out)) return;
  Fail(r.sources(), r.Child(key), r.KeyPath(key),
       "expected a name usable as a folder name (1-128 letters, digits, '.', '_', '-', '+', "
       "not starting with '.'), found '" +
           *out + "'");
}

}  // namespace meshsim::config
