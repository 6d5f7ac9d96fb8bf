#!/usr/bin/env bash
# Install meshsim's build and plotting dependencies from Debian 12 packages.
# Idempotent: installs only what is missing, and runs `apt-get update` only then.
# Run as root, or as a user with sudo.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build
  libyaml-cpp-dev libspdlog-dev libcli11-dev libboost-graph-dev nlohmann-json3-dev
  zlib1g-dev                   # gzip traces (trace.json.gz)
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-matplotlib
  python3-dev pybind11-dev     # the Python module (python/; README "Python")
  python3-pytest python3-pandas  # its tests (tests/python) and DataFrames
  chromium fonts-dejavu-core   # headless browser for the HTML explorer's test
  clang libclang-rt-14-dev     # sanitizer + libFuzzer build (scripts/ci_sanitize.sh, fuzz.sh)
  clang-format                 # scripts/check_format.sh (CI)
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup.sh: all ${#PACKAGES[@]} packages already installed."
  exit 0
fi

echo "setup.sh: installing: ${missing[*]}"

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "setup.sh: error: not running as root and sudo is not available;" >&2
    echo "  run as root or install these packages: ${missing[*]}" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
echo "setup.sh: done."
