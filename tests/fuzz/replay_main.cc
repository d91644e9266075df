// A main for the fuzz targets outside libFuzzer: each target (tests/fuzz/fuzz_*.cc) built with it runs its
// LLVMFuzzerTestOneInput, and so its invariant checks, once on each file named, a directory standing for its
// files in name order. The Release and sanitizer builds compile every target this way and ctest replays its
// seed corpus (fuzz_seeds_*), so a target that no longer compiles or whose seeds break an invariant fails the
// first build and test pass, not only the fuzzer pass at the end of CI (as at stop 71).
// Invariants: exits 0 only when at least one input was replayed and every one returned; an input that breaks
// an invariant aborts (FUZZ_CHECK); an unreadable path or an empty replay exits 1 naming it.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// The files a path names: itself, or a directory's regular files in name order. False when it cannot be read.
bool CollectInputs(const std::filesystem::path& path, std::vector<std::filesystem::path>& out) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    if (!std::filesystem::is_regular_file(path, ec)) return false;
    out.push_back(path);
    return true;
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  if (ec) return false;
  std::sort(files.begin(), files.end());
  out.insert(out.end(), files.begin(), files.end());
  return true;
}

bool ReadFile(const std::filesystem::path& path, std::vector<uint8_t>& bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIRECTORY...\n", argv[0]);
    return 2;
  }
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    if (!CollectInputs(argv[i], inputs)) {
      std::fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[i]);
      return 1;
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "%s: no input to replay in the paths given\n", argv[0]);
    return 1;
  }
  std::vector<uint8_t> bytes;
  for (const auto& path : inputs) {
    if (!ReadFile(path, bytes)) {
      std::fprintf(stderr, "%s: cannot read %s\n", argv[0], path.c_str());
      return 1;
    }
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::printf("replayed %zu input(s)\n", inputs.size());
  return 0;
}
