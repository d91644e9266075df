#!/usr/bin/env python3
"""The quick start installs what the tool needs and nothing the tests need (issue 51 item 1).

usage: check_quickstart_deps.py SOURCE_ROOT

Configures a tool-only build (-DSTRATA_BUILD_TESTS=OFF -DSTRATA_PYTHON=OFF, as scripts/quickstart.sh does) in a
scratch folder and reads, from its CMakeCache.txt, every file the configure found (libraries, headers, config
files, programs), plus the headers the sources include from header-only packages (CLI11). Each file's Debian
package (dpkg -S) must be installed by `scripts/setup.sh --tool` itself or as one of its dependencies: a
package the tool needs but only the full setup installs would break the quick start on a fresh machine. The
packages only the tests use (PyTorch, Chromium, Go, Prometheus, gtest, Node.js, ...) must not be among them.
Exits 1 with the reason on failure.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Heavy packages the tests and the lab need and the tool does not: the quick start must not install them.
TEST_ONLY = ["python3-torch", "chromium", "golang-go", "prometheus", "libgtest-dev", "libbenchmark-dev", "nodejs",
             "python3-pandas", "redis-server", "pybind11-dev", "build-essential", "g++"]
# The compiler's companion programs CMake looks up (archiver, linker, nm, ...): with clang it takes LLVM's where a
# machine has them (here, from the tests' packages) and binutils' otherwise, which clang depends on; either builds
# the same tool, so they are checked as binutils (below), not as the file this machine happened to have.
TOOLCHAIN_ROLES = re.compile(r"CMAKE_(C_COMPILER_|CXX_COMPILER_)?(AR|RANLIB|NM|OBJCOPY|OBJDUMP|READELF|STRIP|ADDR2LINE|"
                             r"DLLTOOL|LINKER)$")
# Not even as a dependency: the tool builds with clang alone (scripts/build.sh), g++ is the sanitizers' pass's.
NOT_PULLED = ["python3-torch", "chromium", "golang-go", "prometheus", "nodejs", "g++-12"]
# Headers of header-only packages the sources include directly (no configure check finds them).
HEADER_ONLY = ["/usr/include/CLI/CLI.hpp"]


def run(*cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def tool_packages(root):
    return run("bash", os.path.join(root, "scripts", "setup.sh"), "--tool", "--list").split()


def closure(packages):
    """The packages and everything they depend on (Depends and Pre-Depends, recursively)."""
    out = run("apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
              "--no-breaks", "--no-replaces", "--no-enhances", *packages)
    names = {line.strip() for line in out.splitlines() if line and not line.startswith(" ")}
    for line in out.splitlines():  # virtual packages resolve to the real ones listed under them
        m = re.match(r"\s+\|?(?:Pre)?Depends: <?([^>\s]+)>?", line)
        if m:
            names.add(m.group(1))
    return {n.split(":")[0] for n in names}


def found_files(build):
    """Files the configure found: FILEPATH/PATH cache entries, and the config file in each *_DIR folder."""
    files = []
    with open(os.path.join(build, "CMakeCache.txt")) as f:
        for line in f:
            m = re.match(r"([A-Za-z0-9_]+):(FILEPATH|PATH)=(/usr/.+)$", line.strip())
            if not m:
                continue
            key, value = m.group(1), m.group(3)
            if TOOLCHAIN_ROLES.match(key):
                continue
            if os.path.isfile(value):
                files.append(value)
            elif key.endswith("_DIR") and os.path.isdir(value):
                configs = [n for n in os.listdir(value) if n.lower().endswith(("config.cmake", "-config.cmake"))]
                files += [os.path.join(value, n) for n in configs[:1]]
    return files + [h for h in HEADER_ONLY if os.path.exists(h)]


def package_of(path):
    # The path itself first: a -dev package owns the libfoo.so symlink, the runtime package its target.
    out = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True).stdout
    if not out:
        out = subprocess.run(["dpkg", "-S", os.path.realpath(path)], capture_output=True, text=True).stdout
    return out.split(":")[0].split(",")[0].strip() if out else None


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    root = os.path.abspath(sys.argv[1])
    failures = []
    tool = tool_packages(root)
    for p in TEST_ONLY:
        if p in tool:
            failures.append(f"setup.sh --tool installs {p}, which only the tests use")
    installed = closure(tool)
    if "binutils" not in installed:
        failures.append("setup.sh --tool does not pull in binutils (the archiver and linker clang falls back on)")
    for p in NOT_PULLED:
        if p in installed:
            failures.append(f"setup.sh --tool pulls in {p} (a dependency of a tool package)")
    with tempfile.TemporaryDirectory(prefix="strata-quickstart-") as build:
        # With the compilers scripts/build.sh gives CMake (clang unless CC/CXX say otherwise).
        cc = shutil.which(os.environ.get("CC", "clang")) or "clang"
        cxx = shutil.which(os.environ.get("CXX", "clang++")) or "clang++"
        run("cmake", "-S", root, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DSTRATA_BUILD_TESTS=OFF",
            "-DSTRATA_PYTHON=OFF", f"-DCMAKE_C_COMPILER={cc}", f"-DCMAKE_CXX_COMPILER={cxx}")
        files = found_files(build)
    if len(files) < 10:
        failures.append(f"only {len(files)} found files read from the cache: the check went blind")
    owners = {}
    for path in files:
        pkg = package_of(path)
        if pkg:
            owners.setdefault(pkg, path)
    for pkg, path in sorted(owners.items()):
        if pkg not in installed:
            failures.append(f"{path} ({pkg}) is needed to build the tool, but setup.sh --tool does not install {pkg}")
    quick = open(os.path.join(root, "scripts", "quickstart.sh")).read()
    if "setup.sh\" --tool" not in quick or "STRATA_TARGETS=strata" not in quick or "STRATA_BUILD_TESTS=OFF" not in quick:
        failures.append("scripts/quickstart.sh does not install the tool's packages alone and build strata alone")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"quick start: {len(tool)} packages ({len(installed)} with their dependencies) own all "
              f"{len(owners)} packages of the {len(files)} files a tool-only build uses; no test-only package")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
