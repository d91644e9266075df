// ByteSource: plain and gzip content, multi-member gzip, Peek, and every error it must name.
#include "importers/byte_source.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <random>
#include <string>
#include <thread>

#include "test_util.h"

namespace strata {
namespace {

using testing::TempDir;

std::string RandomText(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, ' ');
  for (auto& c : s) c = static_cast<char>('a' + rng() % 26);
  return s;
}

// Reads everything with a given chunk size; returns the error message if any.
Expected<std::string> ReadAll(ByteSource& src, size_t chunk) {
  std::string out;
  std::string buf(chunk, '\0');
  for (;;) {
    auto n = src.Read(buf.data(), buf.size());
    if (!n.ok()) return n.status();
    if (n.value() == 0) break;
    out.append(buf.data(), n.value());
  }
  return out;
}

Expected<std::string> OpenAndReadAll(const std::string& path, size_t chunk = 4096) {
  auto src = ByteSource::Open(path);
  if (!src.ok()) return src.status();
  return ReadAll(*src.value(), chunk);
}

TEST(ByteSource, PlainFile) {
  TempDir dir;
  const std::string content = RandomText(3 << 20, 1);  // several input chunks
  testing::WriteFile(dir.file("plain.json"), content);
  for (size_t chunk : {size_t{1} << 20, size_t{65536}, size_t{4099}}) {
    auto src = ByteSource::Open(dir.file("plain.json"));
    ASSERT_TRUE(src.ok()) << src.error();
    EXPECT_FALSE(src.value()->compressed());
    EXPECT_EQ(src.value()->file_size(), content.size());
    auto got = ReadAll(*src.value(), chunk);
    ASSERT_TRUE(got.ok()) << got.error();
    EXPECT_EQ(got.value(), content);
    EXPECT_EQ(src.value()->bytes_produced(), content.size());
  }
  testing::WriteFile(dir.file("small"), "hello, world");
  auto small = OpenAndReadAll(dir.file("small"), 3);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small.value(), "hello, world");
}

TEST(ByteSource, EmptyFile) {
  TempDir dir;
  testing::WriteFile(dir.file("empty"), "");
  auto got = OpenAndReadAll(dir.file("empty"));
  ASSERT_TRUE(got.ok()) << got.error();
  EXPECT_EQ(got.value(), "");
}

TEST(ByteSource, GzipIsDetectedByContentNotName) {
  TempDir dir;
  const std::string content = RandomText(5 << 20, 2) + "{\"tail\": true}";
  testing::WriteGzip(dir.file("no_gz_suffix.json"), content);
  auto src = ByteSource::Open(dir.file("no_gz_suffix.json"));
  ASSERT_TRUE(src.ok()) << src.error();
  EXPECT_TRUE(src.value()->compressed());
  auto got = ReadAll(*src.value(), 1 << 20);
  ASSERT_TRUE(got.ok()) << got.error();
  EXPECT_EQ(got.value(), content);
  EXPECT_EQ(src.value()->bytes_produced(), content.size());
  EXPECT_EQ(src.value()->compressed_bytes_read(), src.value()->file_size());
  // A file named .gz that is not gzip is read as is.
  testing::WriteFile(dir.file("plain.json.gz"), "[1,2]");
  auto plain = OpenAndReadAll(dir.file("plain.json.gz"));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain.value(), "[1,2]");
}

TEST(ByteSource, GzipOfEmptyContent) {
  TempDir dir;
  testing::WriteGzip(dir.file("e.gz"), "");
  auto got = OpenAndReadAll(dir.file("e.gz"));
  ASSERT_TRUE(got.ok()) << got.error();
  EXPECT_EQ(got.value(), "");
}

TEST(ByteSource, MultiMemberGzip) {
  TempDir dir;
  const std::string a = RandomText(300000, 3), b = RandomText(200000, 4), c = "third";
  const std::string both = testing::GzipBytes(a) + testing::GzipBytes(b) + testing::GzipBytes(c);
  testing::WriteFile(dir.file("multi.gz"), both);
  for (size_t chunk : {size_t{1} << 20, size_t{1000}}) {
    auto got = OpenAndReadAll(dir.file("multi.gz"), chunk);
    ASSERT_TRUE(got.ok()) << got.error();
    EXPECT_EQ(got.value(), a + b + c);
  }
}

// Writes `bytes` into a pipe from another thread (a pipe holds 64 KiB: the writer must run concurrently).
class PipeWriter {
 public:
  explicit PipeWriter(std::string bytes) : bytes_(std::move(bytes)) {
    if (::pipe(fds_) != 0) std::abort();
    writer_ = std::thread([this] {
      size_t done = 0;
      while (done < bytes_.size()) {
        const ssize_t n = ::write(fds_[1], bytes_.data() + done, bytes_.size() - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
      }
      ::close(fds_[1]);
    });
  }
  ~PipeWriter() {
    writer_.join();
    ::close(fds_[0]);
  }
  std::string path() const { return "/dev/fd/" + std::to_string(fds_[0]); }

 private:
  std::string bytes_;
  int fds_[2] = {-1, -1};
  std::thread writer_;
};

// Pipes cannot be rewound or reopened: sniffing (gzip magic, PeekRaw, Peek) must come from a buffered prefix.
TEST(ByteSource, PipeIsReadOnceWithSniffing) {
  const std::string content = RandomText(1 << 20, 7) + "{\"end\": 1}";
  for (bool gzip : {false, true}) {
    PipeWriter pipe(gzip ? testing::GzipBytes(content) : content);
    auto src = ByteSource::Open(pipe.path());
    ASSERT_TRUE(src.ok()) << src.error();
    EXPECT_FALSE(src.value()->regular_file());
    EXPECT_EQ(src.value()->compressed(), gzip);
    auto raw = src.value()->PeekRaw(8);
    ASSERT_TRUE(raw.ok()) << raw.error();
    EXPECT_EQ(raw.value().size(), 8u);
    EXPECT_EQ(static_cast<unsigned char>(raw.value()[0]), gzip ? 0x1f : static_cast<unsigned char>(content[0]));
    auto head = src.value()->Peek(100);
    ASSERT_TRUE(head.ok()) << head.error();
    EXPECT_EQ(head.value(), content.substr(0, 100));
    auto all = ReadAll(*src.value(), 4099);
    ASSERT_TRUE(all.ok()) << all.error();
    EXPECT_EQ(all.value(), content) << (gzip ? "gzip" : "plain");
  }
}

TEST(ByteSource, PeekThenReadReturnsEverything) {
  TempDir dir;
  const std::string content = RandomText(10000, 5);
  testing::WriteFile(dir.file("p"), content);
  testing::WriteGzip(dir.file("p.gz"), content);
  for (const char* name : {"p", "p.gz"}) {
    auto src = ByteSource::Open(dir.file(name));
    ASSERT_TRUE(src.ok());
    auto head = src.value()->Peek(4096);
    ASSERT_TRUE(head.ok()) << head.error();
    EXPECT_EQ(head.value(), content.substr(0, 4096)) << name;
    auto all = ReadAll(*src.value(), 1000);
    ASSERT_TRUE(all.ok()) << all.error();
    EXPECT_EQ(all.value(), content) << name;
    EXPECT_EQ(src.value()->bytes_produced(), content.size()) << name;
  }
  // Peek past the end of a small file.
  testing::WriteFile(dir.file("tiny"), "ab");
  auto src = ByteSource::Open(dir.file("tiny"));
  ASSERT_TRUE(src.ok());
  auto head = src.value()->Peek(4096);
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head.value(), "ab");
  auto all = ReadAll(*src.value(), 1);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all.value(), "ab");
}

TEST(ByteSource, TruncatedGzipIsAnErrorNamingTheFile) {
  TempDir dir;
  const std::string gz = testing::GzipBytes(RandomText(400000, 6));
  // Cut in the deflate data, in the 8-byte trailer, and right after the header.
  for (size_t keep : {gz.size() / 2, gz.size() - 4, size_t{12}, size_t{2}}) {
    const std::string path = dir.file("cut_" + std::to_string(keep) + ".json.gz");
    testing::WriteFile(path, gz.substr(0, keep));
    auto got = OpenAndReadAll(path);
    ASSERT_FALSE(got.ok()) << "kept " << keep << " of " << gz.size() << " bytes";
    EXPECT_NE(got.error().find(path), std::string::npos) << got.error();
    EXPECT_NE(got.error().find("truncated"), std::string::npos) << got.error();
  }
}

TEST(ByteSource, TruncatedGzipPeekSeesDataThenReadFails) {
  TempDir dir;
  const std::string gz = testing::GzipBytes(RandomText(400000, 7));
  const std::string path = dir.file("cut.gz");
  testing::WriteFile(path, gz.substr(0, gz.size() - 10));
  auto src = ByteSource::Open(path);
  ASSERT_TRUE(src.ok());
  auto head = src.value()->Peek(4096);
  ASSERT_TRUE(head.ok()) << head.error();
  EXPECT_EQ(head.value().size(), 4096u);
  auto all = ReadAll(*src.value(), 1 << 16);
  ASSERT_FALSE(all.ok());
  EXPECT_NE(all.error().find("truncated"), std::string::npos) << all.error();
}

TEST(ByteSource, CorruptGzipIsAnError) {
  TempDir dir;
  const std::string gz = testing::GzipBytes(RandomText(400000, 8));
  {
    std::string bad = gz;
    bad[2] = 7;  // unknown compression method
    testing::WriteFile(dir.file("method.gz"), bad);
    auto got = OpenAndReadAll(dir.file("method.gz"));
    ASSERT_FALSE(got.ok());
    EXPECT_NE(got.error().find(dir.file("method.gz")), std::string::npos) << got.error();
    EXPECT_NE(got.error().find("corrupt gzip data"), std::string::npos) << got.error();
  }
  {
    std::string bad = gz;
    for (size_t i = gz.size() / 3; i < gz.size() / 3 + 64; ++i) bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    testing::WriteFile(dir.file("middle.gz"), bad);
    auto got = OpenAndReadAll(dir.file("middle.gz"));
    ASSERT_FALSE(got.ok());
    EXPECT_NE(got.error().find(dir.file("middle.gz")), std::string::npos) << got.error();
    EXPECT_NE(got.error().find("gzip"), std::string::npos) << got.error();
  }
  {
    std::string bad = gz;
    bad[bad.size() - 6] = static_cast<char>(bad[bad.size() - 6] ^ 1);  // CRC-32 in the trailer
    testing::WriteFile(dir.file("crc.gz"), bad);
    auto got = OpenAndReadAll(dir.file("crc.gz"));
    ASSERT_FALSE(got.ok());
    EXPECT_NE(got.error().find("corrupt gzip data"), std::string::npos) << got.error();
  }
  {
    // Garbage after a complete member is not a second member.
    testing::WriteFile(dir.file("trailing.gz"), gz + "this is not gzip");
    auto got = OpenAndReadAll(dir.file("trailing.gz"));
    ASSERT_FALSE(got.ok());
    EXPECT_NE(got.error().find(dir.file("trailing.gz")), std::string::npos) << got.error();
  }
}

TEST(ByteSource, MissingFileIsAnErrorNamingIt) {
  TempDir dir;
  const std::string path = dir.file("does_not_exist.json");
  auto src = ByteSource::Open(path);
  ASSERT_FALSE(src.ok());
  EXPECT_NE(src.error().find(path), std::string::npos) << src.error();
  EXPECT_NE(src.error().find("cannot open"), std::string::npos) << src.error();
  EXPECT_NE(src.error().find("No such file"), std::string::npos) << src.error();
}

TEST(ByteSource, DirectoryIsAnError) {
  TempDir dir;
  auto src = ByteSource::Open(dir.path());
  ASSERT_FALSE(src.ok());
  EXPECT_NE(src.error().find(dir.path()), std::string::npos) << src.error();
  EXPECT_NE(src.error().find("is a directory"), std::string::npos) << src.error();
}

}  // namespace
}  // namespace strata
