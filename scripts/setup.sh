#!/usr/bin/env bash
# Installs every Debian package strata needs to build, test and run. Idempotent and non-interactive:
# packages already present are not fetched again, and `apt-get update` runs only when something is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config clang clang-format libclang-rt-14-dev
  libsimdjson-dev   # JSON parsing of Kineto traces
  libfmt-dev        # text formatting
  libcli11-dev      # command-line parsing
  nlohmann-json3-dev  # JSON output (reports) and small JSON documents
  zlib1g-dev        # gzip input (streaming inflate)
  libzstd-dev       # recorder segment compression
  libmnl-dev        # recorder: rtnetlink queries (link shaping rate, qdisc queue statistics)
  libeigen3-dev     # linear algebra of the online detector (Gaussian mixture over step summaries)
  libcpp-httplib-dev  # strata agent's HTTP endpoints (/metrics, /api/v1/status)
  libhiredis-dev    # Redis client: agents publish step summaries to streams, `strata serve` consumes them
  redis-server      # tests of the multi-node path start their own redis-server
  prometheus        # the agent test has a real Prometheus scrape /metrics (and promtool lint the exposition)
  curl              # tests query the agent and serve HTTP APIs inside network namespaces
  libgtest-dev libgmock-dev  # unit and golden tests
  libbenchmark-dev  # micro benchmarks
  libbpf-dev libelf-dev bpftool linux-perf  # eBPF recorder: BPF loading, ELF symbols, skeletons, perf
  libdw-dev         # recorder: source file and line of sampled native frames (DWARF), where libraries have it
  python3 python3-torch python3-numpy python3-jsonschema  # lab jobs, verifiers, schema checks
  iproute2 procps util-linux  # lab injectors: ip netns/veth/bridge, tc tbf; pgrep; taskset
  gzip
  dpkg-dev man-db   # the .deb (cpack -G DEB, dpkg-shlibdeps) and the man page check (tests/cli/check_install.sh)
  chromium          # browser test of the HTML report (tests/browser: headless DOM dump and screenshot)
  python3-pil       # scripts/report_screenshot.py: crops the report screenshots in docs/img
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# Node.js and npm: tests/viewer loads `strata export` output in Chrome DevTools' trace engine (an npm package).
# A machine whose Node.js comes from elsewhere, with its own npm, keeps it.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
else
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  echo "setup: done"
fi

# The npm packages of the tests, at the versions of their lock file (again only when the lock file changed).
viewer="$(cd "$(dirname "$0")/.." && pwd)/tests/viewer"
if ! cmp -s "$viewer/package-lock.json" "$viewer/node_modules/.strata-installed-lock" 2>/dev/null; then
  echo "setup: npm ci in tests/viewer"
  (cd "$viewer" && npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.strata-installed-lock)
fi
