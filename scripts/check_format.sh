#!/usr/bin/env bash
# Fails (exit 1, listing the files) if a C++ file of sim/ or tests/ is not formatted by
# the repository's .clang-format (clang-format 14, Debian's). Run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "check_format.sh: clang-format is missing (bash scripts/setup.sh)" >&2; exit 2; }
bad=()
while IFS= read -r f; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files 'sim/*.cc' 'sim/*.h' 'tests/*.cc' 'tests/*.h')
if [[ ${#bad[@]} -gt 0 ]]; then
  echo "check_format.sh: not formatted (run clang-format -i on them):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check_format.sh: all $(git ls-files 'sim/*.cc' 'sim/*.h' 'tests/*.cc' 'tests/*.h' | wc -l) C++ files formatted"
