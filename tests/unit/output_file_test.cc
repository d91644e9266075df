// cli/output's OutputFile (output written as it is made): a regular file appears under its name only at Commit,
// and an OutputFile destroyed before Commit leaves the target as it was and no temporary beside it; WriteOutput
// (one piece) still replaces a file atomically with the same permission bits; a ".gz" target is written
// gzip-compressed unless the content already is gzip.
#include "cli/output.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace strata {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "strata-output-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path); }
  size_t Entries() const { return static_cast<size_t>(std::distance(fs::directory_iterator(path), {})); }
};

TEST(OutputFile, AppearsOnlyAtCommit) {
  TempDir dir;
  const fs::path target = dir.path / "out.json";
  std::ofstream(target) << "old";
  ::chmod(target.c_str(), 0640);
  OutputFile out;
  ASSERT_TRUE(out.Open(target.string()).ok());
  ASSERT_TRUE(out.Write("new ").ok());
  EXPECT_EQ(Read(target), "old");  // written beside it until Commit
  ASSERT_TRUE(out.Write("text").ok());
  ASSERT_TRUE(out.Commit().ok());
  EXPECT_EQ(Read(target), "new text");
  EXPECT_EQ(fs::status(target).permissions() & fs::perms::all, fs::perms(0640));
  EXPECT_EQ(dir.Entries(), 1u);
}

TEST(OutputFile, DestroyedBeforeCommitLeavesTheTargetAndNoTemporary) {
  TempDir dir;
  const fs::path target = dir.path / "out.json";
  std::ofstream(target) << "old";
  {
    OutputFile out;
    ASSERT_TRUE(out.Open(target.string()).ok());
    ASSERT_TRUE(out.Write("half of a report").ok());
    EXPECT_EQ(dir.Entries(), 2u);  // the target and the temporary
  }
  EXPECT_EQ(Read(target), "old");
  EXPECT_EQ(dir.Entries(), 1u);
}

TEST(OutputFile, RefusesAnInputAsOutput) {
  TempDir dir;
  const fs::path input = dir.path / "rank-0.json";
  std::ofstream(input) << "{}";
  OutputFile out;
  const Status st = out.Open(input.string(), {input.string()});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("one of the inputs"), std::string::npos) << st.message();
  EXPECT_EQ(Read(input), "{}");
  EXPECT_FALSE(out.Write("x").ok());  // never opened
}

TEST(OutputFile, WriteOutputStillReplacesInOnePiece) {
  TempDir dir;
  const fs::path target = dir.path / "report.txt";
  ASSERT_TRUE(WriteOutput(target.string(), "report\n").ok());
  EXPECT_EQ(Read(target), "report\n");
  EXPECT_EQ(dir.Entries(), 1u);
}

// The file's bytes, gunzipped once (zlib's gz reader passes a plain file through unchanged).
std::string Gunzip(const fs::path& p) {
  gzFile f = gzopen(p.c_str(), "rb");
  std::string out;
  char buf[4096];
  for (int n; (n = gzread(f, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

TEST(OutputFile, AGzNameIsWrittenCompressedOnceAndOnlyOnce) {
  TempDir dir;
  const std::string text(100000, 'x');
  ASSERT_TRUE(WriteOutput((dir.path / "a.json.gz").string(), text).ok());
  const std::string raw = Read(dir.path / "a.json.gz");
  ASSERT_GE(raw.size(), 2u);
  EXPECT_EQ(raw.substr(0, 2), "\x1f\x8b");
  EXPECT_LT(raw.size(), text.size() / 10);
  EXPECT_EQ(Gunzip(dir.path / "a.json.gz"), text);
  // Content that is gzip already (a pprof profile) is written as it is.
  ASSERT_TRUE(WriteOutput((dir.path / "b.pb.gz").string(), raw).ok());
  EXPECT_EQ(Read(dir.path / "b.pb.gz"), raw);
  // Streamed in pieces, and nothing at all: a valid gzip stream either way.
  OutputFile out;
  ASSERT_TRUE(out.Open((dir.path / "c.gz").string()).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(out.Write("piece ").ok());
  ASSERT_TRUE(out.Commit().ok());
  EXPECT_EQ(Gunzip(dir.path / "c.gz"), "piece piece piece ");
  ASSERT_TRUE(WriteOutput((dir.path / "d.gz").string(), "").ok());
  EXPECT_EQ(Read(dir.path / "d.gz").substr(0, 2), "\x1f\x8b");
  EXPECT_EQ(Gunzip(dir.path / "d.gz"), "");
  // Other names are written as they are.
  ASSERT_TRUE(WriteOutput((dir.path / "e.json").string(), "plain").ok());
  EXPECT_EQ(Read(dir.path / "e.json"), "plain");
}

}  // namespace
}  // namespace strata
