// Replays the fuzzers' seed corpora (tests/fuzz/corpus/) through the importers in the ordinary
// sanitizer build, so the hand-written seeds and any reproducer added there stay regression tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "analysis/job_summary.h"
#include "importers/byte_source.h"
#include "importers/kineto_importer.h"
#include "importers/op_table_importer.h"
#include "importers/pickle_reader.h"
#include "test_paths.h"
#include "test_util.h"

namespace strata {
namespace {

std::vector<std::string> CorpusFiles(const std::string& name) {
  std::vector<std::string> files;
  const std::filesystem::path dir =
      std::filesystem::path(::strata::test_paths::kSourceDir) / "tests/fuzz/corpus" / name;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.is_regular_file()) files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

void CheckStore(const TraceStore& s) {
  for (size_t i = 0; i < s.slices.size(); ++i) {
    ASSERT_LT(s.slices.track[i].value, s.tracks.size());
    ASSERT_GE(s.slices.dur_ns[i], 0);
    ASSERT_LT(s.slices.name[i].value, s.strings.size());
  }
  for (const Track& t : s.tracks) ASSERT_LT(t.rank, s.ranks.size());
  for (bool include_last : {false, true}) {
    BreakdownOptions options;
    options.include_last_step = include_last;
    const JobSummary job = Summarize(s, options);
    for (const RankSummary& r : job.ranks) {
      if (r.gpu) {
        EXPECT_NEAR(r.gpu->idle_us + r.gpu->compute_us + r.gpu->non_compute_us, r.gpu->kernel_time_us, 1e-6);
      }
    }
  }
}

TEST(FuzzCorpus, KinetoSeedsImport) {
  const auto files = CorpusFiles("kineto");
  ASSERT_GE(files.size(), 3u) << "seed corpus missing";
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    auto src = ByteSource::Open(path);
    ASSERT_TRUE(src.ok()) << src.error();
    auto r = ImportKineto(*src.value(), ImportOptions());
    if (!r.ok()) {
      EXPECT_NE(r.error().find(path), std::string::npos) << r.error();
      continue;
    }
    CheckStore(r.value());
  }
}

TEST(FuzzCorpus, OpTableSeedsImport) {
  const auto files = CorpusFiles("op_table");
  ASSERT_GE(files.size(), 3u) << "seed corpus missing";
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    auto src = ByteSource::Open(path);
    ASSERT_TRUE(src.ok()) << src.error();
    auto r = ImportOpTable(*src.value(), ImportOptions());
    if (!r.ok()) {
      EXPECT_NE(r.error().find(path), std::string::npos) << r.error();
      continue;
    }
    CheckStore(r.value());
  }
}

TEST(FuzzCorpus, PickleSeedsParseOrSayWhereTheyStop) {
  const auto files = CorpusFiles("pickle");
  ASSERT_GE(files.size(), 3u) << "seed corpus missing";
  size_t parsed = 0;
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto r = ParsePickle(bytes);
    if (!r.ok()) {
      EXPECT_EQ(r.error().rfind("pickle: byte offset ", 0), 0u) << r.error();
      continue;
    }
    ++parsed;
  }
  EXPECT_GE(parsed, 3u);
}

}  // namespace
}  // namespace strata
