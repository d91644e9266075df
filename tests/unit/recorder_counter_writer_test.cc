// CounterWriter (recorder/counter_writer.h): a recording's host counters sampled into its segment, on this test
// process's own /proc. Each series is described once, by the sample that first gave it a row, in id order; rows
// refer only to described series; a process added between samples adds series without describing the old ones
// again. (Checked by breaking it: a writer that describes every series at every sample fails here.)
#include <gtest/gtest.h>

#ifdef STRATA_HAVE_RECORDER
#include <unistd.h>

#include <set>
#include <string>
#include <vector>

#include "recorder/counter_writer.h"
#include "segments/segment_reader.h"
#include "segments/segment_writer.h"
#include "test_util.h"

namespace strata::recorder {
namespace {

HostCounterSampler::Options Local() {
  HostCounterSampler::Options o;
  o.nvml = false;   // no GPU here, and no warning about it
  o.links = false;  // no network namespaces to read
  return o;
}

// The "series" records of a segment, in the order written.
std::vector<nlohmann::json> SeriesRecords(const segments::SegmentData& d) {
  std::vector<nlohmann::json> out;
  for (const auto& m : d.meta)
    if (m.value("type", "") == "series") out.push_back(m);
  return out;
}

TEST(CounterWriter, EachSeriesIsDescribedOnceInIdOrderAndRowsReferOnlyToDescribedSeries) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/c.sseg";
  segments::SegmentWriter writer;
  ASSERT_TRUE(writer.Open(path, segments::FileHeader{}).ok());
  CounterWriter counters(Local());
  std::vector<std::string> notes;
  auto note = [&](const std::string& n) { notes.push_back(n); };

  counters.Sample(1'000'000'000, {}, &writer, note);
  const size_t machine_series = counters.series_written();
  counters.Sample(2'000'000'000, {static_cast<int>(::getpid())}, &writer, note);
  const size_t with_process = counters.series_written();
  counters.Sample(3'000'000'000, {static_cast<int>(::getpid())}, &writer, note);
  // (the same process again may still add a series: a value first read at its second sample)
  const size_t total = counters.series_written();
  EXPECT_GE(total, with_process);
  EXPECT_GT(with_process, machine_series) << "a traced process has counters of its own (schedstat, status)";
  ASSERT_TRUE(writer.Close().ok());

  auto read = segments::ReadSegment(path);
  ASSERT_TRUE(read.ok()) << read.error();
  const std::vector<nlohmann::json> series = SeriesRecords(read.value());
  ASSERT_EQ(series.size(), total) << "each series described once, none twice";
  for (size_t i = 0; i < series.size(); ++i) {
    EXPECT_EQ(series[i]["id"], i) << "written in id order, each once";
    EXPECT_FALSE(series[i]["name"].get<std::string>().empty());
  }
  std::set<uint64_t> own_pid_series;
  for (const auto& s : series)
    if (s["pid"] == ::getpid()) own_pid_series.insert(s["id"].get<uint64_t>());
  EXPECT_FALSE(own_pid_series.empty());
  for (uint64_t id : own_pid_series) EXPECT_GE(id, machine_series) << "described by the sample that added the pid";
  ASSERT_FALSE(read.value().counters.empty());
  std::set<int64_t> stamps;
  for (const CounterRow& row : read.value().counters) {
    EXPECT_LT(row.series, series.size()) << "a row of an undescribed series";
    stamps.insert(static_cast<int64_t>(row.ts_ns));
  }
  EXPECT_TRUE(stamps.count(2'000'000'000) && stamps.count(3'000'000'000)) << "rows stamped with their sample's time";
  for (int64_t t : stamps) EXPECT_TRUE(t == 1'000'000'000 || t == 2'000'000'000 || t == 3'000'000'000) << t;
}

}  // namespace
}  // namespace strata::recorder
#endif  // STRATA_HAVE_RECORDER
