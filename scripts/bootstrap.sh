#!/usr/bin/env bash
# Set up, build and run spmdsim on a fresh Debian 12 machine.
#   bash scripts/bootstrap.sh demo   install missing packages, build, run `spmdsim demo`
#   bash scripts/bootstrap.sh test   install missing packages, build, run the whole test suite; then build
#                                    again with clang under AddressSanitizer and UBSan (build-sanitize/) and
#                                    run the whole suite there too, with the fuzzers' short runs
set -euo pipefail

usage() {
  echo "usage: bash scripts/bootstrap.sh MODE" >&2
  echo "  MODE is one of: demo, test" >&2
}

if [[ $# -ne 1 ]]; then
  echo "bootstrap: expected exactly one MODE argument" >&2
  usage
  exit 2
fi
mode=$1
case "$mode" in
  demo | test) ;;
  *)
    echo "bootstrap: unknown MODE '$mode' (valid: demo, test)" >&2
    usage
    exit 2
    ;;
esac

# Work from the repository root whatever the caller's directory.
cd "$(dirname "${BASH_SOURCE[0]}")/.."

packages=(build-essential cmake pkg-config libsimgrid-dev libeigen3-dev libboost-program-options-dev
          libgtest-dev libbenchmark-dev nlohmann-json3-dev libfmt-dev libjemalloc-dev python3-matplotlib
          clang-14 libclang-rt-14-dev pybind11-dev python3-dev python3-venv slurm-wlm munge)
missing=()
for p in "${packages[@]}"; do
  if [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" != "install ok installed" ]]; then
    missing+=("$p")
  fi
done
if [[ ${#missing[@]} -gt 0 ]]; then
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo > /dev/null; then
      sudo=(sudo)
    else
      echo "bootstrap: missing packages (${missing[*]}) and not root; install them or rerun as root" >&2
      exit 1
    fi
  fi
  echo "==> installing: ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "==> all packages present"
fi

# The Python front end's environment (docs/python.md): JAX on CPU and pytest, pinned in python/requirements.txt,
# from PyPI. Made once; pip leaves pinned packages already there alone, so a second run downloads nothing.
echo "==> Python environment .venv/ (python/requirements.txt)"
if [[ ! -x .venv/bin/python ]]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -r python/requirements.txt

jobs=$(nproc)
echo "==> configuring into build/ (RelWithDebInfo)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
echo "==> building with -j${jobs}"
cmake --build build -j"${jobs}"
# .venv/ imports the package built in build/python/ (a .pth file, so a rebuild needs no reinstall).
site_packages=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$PWD/build/python" > "$site_packages/spmdsim_build.pth"
.venv/bin/python -c "import spmdsim, jax" || { echo "bootstrap: .venv/bin/python cannot import spmdsim and jax" >&2; exit 1; }

case "$mode" in
  demo)
    echo "==> running: build/experiments/spmdsim demo"
    build/experiments/spmdsim demo
    ;;
  test)
    echo "==> running: ctest --test-dir build --output-on-failure -j${jobs}"
    ctest --test-dir build --output-on-failure -j"${jobs}"
    # The same suite under the sanitizers (docs/testing.md): clang, so that this one build also gives the
    # libFuzzer targets, whose short runs are tests of this build.
    echo "==> configuring into build-sanitize/ (clang 14, -DSPMDSIM_SANITIZE=address,undefined)"
    cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
      -DSPMDSIM_SANITIZE=address,undefined
    echo "==> building build-sanitize/ with -j${jobs}"
    cmake --build build-sanitize -j"${jobs}"
    echo "==> running: ctest --test-dir build-sanitize --output-on-failure -j${jobs}"
    UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir build-sanitize --output-on-failure -j"${jobs}"
    ;;
esac
echo "==> bootstrap ${mode}: done"
