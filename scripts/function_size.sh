#!/usr/bin/env bash
# Lists the functions of sim/ longer than a limit (STYLE.md: small functions), with
# clang-tidy's readability-function-size over a build's compile database. Lines count
# from the signature to the closing brace, blank lines and comments included; a lambda
# counts in the function that holds it.
#
# Usage: scripts/function_size.sh BUILD_DIR [MAX_LINES=80] [FILE_REGEX=sim/]
#   BUILD_DIR: a configured build folder (scripts/build.sh writes compile_commands.json).
# Prints "file:line: function: N lines", longest first; exits 1 if any function is over.
# Needs clang-tidy (Debian: apt-get install clang-tidy); takes about a minute a floor.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: scripts/function_size.sh BUILD_DIR [MAX_LINES] [FILE_REGEX]}
max=${2:-80}
files=${3:-sim/}
command -v run-clang-tidy >/dev/null || { echo "function_size.sh: needs clang-tidy" >&2; exit 2; }
config="{CheckOptions: [{key: readability-function-size.LineThreshold, value: $max}]}"
report=$(run-clang-tidy -p "$build" -quiet -j "$(nproc)" -checks='-*,readability-function-size' \
  -config="$config" -header-filter='.*/sim/.*' "$files" 2>/dev/null |
  sed 's/\x1b\[[0-9;]*m//g' |
  awk -v root="$PWD/" '
    /warning: function .* exceeds/ { split($1, a, ":"); f = a[1] ":" a[2];
                                     sub(root, "", f); match($0, /function '\''[^'\'']*'\''/);
                                     name = substr($0, RSTART + 10, RLENGTH - 11) }
    /note: [0-9]+ lines including/ { match($0, /[0-9]+ lines/);
                                     print substr($0, RSTART, RLENGTH) "\t" f ": " name }' |
  sort -u | sort -t' ' -k1,1nr | awk -F'\t' '{print $2 ": " $1}')
if [[ -n "$report" ]]; then
  echo "$report"
  exit 1
fi
echo "function_size.sh: no function over $max lines in files matching '$files'."
