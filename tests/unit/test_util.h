// Helpers shared by the unit tests: temporary files and directories, gzip writing, importing text.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "importers/byte_source.h"
#include "importers/import_options.h"
#include "importers/kineto_importer.h"
#include "importers/op_table_importer.h"
#include "store/trace_store.h"
#include "test_paths.h"

namespace strata::testing {

/// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/strata_test_XXXXXX";
    char* made = ::mkdtemp(tmpl.data());
    if (made == nullptr) {
      ADD_FAILURE() << "mkdtemp failed for " << tmpl;
    } else {
      path_ = made;
    }
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

/// A temporary file made with mkstemp holding `content`, removed on destruction.
class TempFile {
 public:
  explicit TempFile(std::string_view content, std::string_view suffix = "") {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/strata_test_XXXXXX" + std::string(suffix);
    const int fd = ::mkstemps(tmpl.data(), static_cast<int>(suffix.size()));
    if (fd < 0) {
      ADD_FAILURE() << "mkstemps failed for " << tmpl;
      return;
    }
    path_ = tmpl;
    size_t done = 0;
    while (done < content.size()) {
      const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
      if (n <= 0) {
        ADD_FAILURE() << "write failed for " << path_;
        break;
      }
      done += static_cast<size_t>(n);
    }
    ::close(fd);
  }
  ~TempFile() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline void WriteFile(const std::string& path, std::string_view content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  ASSERT_TRUE(out) << "cannot write " << path;
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// A stand-in for `strata record` as the agent's flight recorder runs it (`record -q --no-nccl-plugin -o DIR
/// ...`: $5 is the chunk's directory): writes its arguments into its chunk (args.txt) and stays alive until
/// stopped. Returns the script's path, in `dir`.
inline std::string WriteStandInRecorder(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "recorder.sh").string();
  // args.txt appears whole (written aside, then renamed): a reader waiting for it never sees it half-written.
  std::ofstream(path) << "#!/bin/sh\nmkdir -p \"$5\"\necho \"$@\" > \"$5/.args.tmp\"\n"
                         "mv \"$5/.args.tmp\" \"$5/args.txt\"\nexec sleep 60\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

/// Writes `content` as one gzip member with zlib's gzopen/gzwrite.
inline void WriteGzip(const std::string& path, std::string_view content) {
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr) << "gzopen failed for " << path;
  size_t done = 0;
  while (done < content.size()) {
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(content.size() - done, 1u << 20));
    const int n = gzwrite(gz, content.data() + done, chunk);
    ASSERT_GT(n, 0) << "gzwrite failed for " << path;
    done += static_cast<size_t>(n);
  }
  ASSERT_EQ(gzclose(gz), Z_OK);
}

/// The gzip encoding of `content` (one member).
inline std::string GzipBytes(std::string_view content) {
  TempDir dir;
  const std::string p = dir.file("x.gz");
  WriteGzip(p, content);
  return ReadFile(p);
}

/// Imports a Kineto/Chrome JSON document held in memory (written to a temporary file first).
inline Expected<TraceStore> ImportKinetoText(std::string_view json, size_t batch_bytes = ImportOptions().batch_bytes,
                                             std::string* path_out = nullptr, bool pipeline = false) {
  TempFile f(json, ".json");
  if (path_out) *path_out = f.path();
  auto src = ByteSource::Open(f.path());
  if (!src.ok()) return src.status();
  ImportOptions options;
  options.batch_bytes = batch_bytes;
  options.pipeline = pipeline;
  return ImportKineto(*src.value(), options);
}

/// Imports an op-table CSV held in memory.
inline Expected<TraceStore> ImportOpTableText(std::string_view csv, const ImportOptions& options = ImportOptions(),
                                              std::string* path_out = nullptr) {
  TempFile f(csv, ".csv");
  if (path_out) *path_out = f.path();
  auto src = ByteSource::Open(f.path());
  if (!src.ok()) return src.status();
  return ImportOpTable(*src.value(), options);
}

inline std::string SharedDir() { return ::strata::test_paths::kSharedDir; }
inline bool Exists(const std::string& p) { return std::filesystem::exists(p); }

/// The first input's skipped count under an output key (e.g. "unsupported_phase_P"), 0 when none.
inline uint64_t SkippedCount(const TraceStore& store, const std::string& key) {
  if (store.inputs.empty()) return 0;
  const auto by_key = store.inputs[0].skipped.ByKey();
  auto it = by_key.find(key);
  return it == by_key.end() ? 0 : it->second;
}

inline uint64_t TotalSkipped(const TraceStore& store) {
  uint64_t total = 0;
  for (const auto& in : store.inputs) total += in.skipped.Total();
  return total;
}

}  // namespace strata::testing
