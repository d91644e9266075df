// TraceStore: append() remaps string, rank, track, input and args indices; resident cost per slice.
#include "store/trace_store.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "importers/job_loader.h"
#include "test_util.h"

namespace strata {
namespace {

// A store with one input, one rank, two tracks, slices with collective and layout args, a flow, a counter.
TraceStore MakeStore(const std::string& prefix, int32_t rank) {
  TraceStore s;
  // Intern some strings in a store-specific order so ids differ between stores.
  if (prefix == "b") s.strings.intern("padding-only-in-b");
  const StringId name1 = s.strings.intern(prefix + "-kernel");
  const StringId shared = s.strings.intern("shared-name");
  const StringId cat = s.strings.intern("kernel");
  const StringId thread = s.strings.intern(prefix + "-thread");
  const StringId coll = s.strings.intern("allreduce");
  const StringId group = s.strings.intern(prefix + "-group");
  s.inputs.push_back(InputInfo{prefix + ".json", InputFormat::kKineto, 3, {}, {}, false});
  RankInfo r;
  r.rank = rank;
  r.input = 0;
  s.ranks.push_back(r);
  s.tracks.push_back(Track{0, TrackKind::kCpuThread, 1, 2, -1, thread});
  s.tracks.push_back(Track{0, TrackKind::kGpuStream, 0, 7, 7, StringId()});
  CollectiveArgs a;
  a.collective = coll;
  a.group = group;
  a.in_nelems = rank * 100;
  s.collective_args.push_back(a);
  s.op_layout.push_back(OpLayout{rank, 1, 0});
  s.slices.append(10, 5, name1, cat, TrackId(1), 42, kSliceComplete | kSliceGpu | kSliceCollectiveArgs, 0);
  s.slices.append(20, 1, shared, StringId(), TrackId(0), kNoCorrelation, kSliceComplete | kSliceOpLayout, 0);
  s.slices.step.back() = rank + 10;
  s.slices.append(30, 0, shared, cat, TrackId(0), kNoCorrelation, kSliceInstant);
  s.flows.id.push_back(99);
  s.flows.ts_ns.push_back(11);
  s.flows.track.push_back(TrackId(1));
  s.flows.category.push_back(cat);
  s.flows.phase.push_back('s');
  s.counters.track.push_back(TrackId(0));
  s.counters.ts_ns.push_back(12);
  s.counters.value.push_back(rank + 0.5);
  return s;
}

TEST(TraceStore, AppendIntoEmptyMoves) {
  TraceStore all;
  all.append(MakeStore("a", 0));
  ASSERT_EQ(all.slices.size(), 3u);
  EXPECT_EQ(all.strings.view(all.slices.name[0]), "a-kernel");
}

TEST(TraceStore, AppendRemapsEveryIndex) {
  TraceStore all = MakeStore("a", 0);
  TraceStore b = MakeStore("b", 1);
  all.append(std::move(b));
  EXPECT_EQ(b.slices.size(), 0u);  // NOLINT(bugprone-use-after-move): append leaves `other` empty

  ASSERT_EQ(all.inputs.size(), 2u);
  ASSERT_EQ(all.ranks.size(), 2u);
  ASSERT_EQ(all.tracks.size(), 4u);
  ASSERT_EQ(all.slices.size(), 6u);
  ASSERT_EQ(all.collective_args.size(), 2u);
  ASSERT_EQ(all.op_layout.size(), 2u);
  ASSERT_EQ(all.flows.size(), 2u);
  ASSERT_EQ(all.counters.size(), 2u);

  EXPECT_EQ(all.ranks[1].rank, 1);
  EXPECT_EQ(all.inputs[all.ranks[1].input].path, "b.json");
  EXPECT_EQ(all.tracks[2].rank, 1u);
  EXPECT_EQ(all.tracks[3].rank, 1u);
  EXPECT_EQ(all.strings.view(all.tracks[2].name), "b-thread");
  EXPECT_EQ(all.strings.view(all.tracks[0].name), "a-thread");
  EXPECT_EQ(all.tracks[3].stream, 7);

  // Names through the merged pool.
  const char* want_names[] = {"a-kernel", "shared-name", "shared-name", "b-kernel", "shared-name", "shared-name"};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(all.strings.view(all.slices.name[i]), want_names[i]) << i;
  EXPECT_EQ(all.slices.name[1], all.slices.name[4]);  // the same string has one id after the merge
  EXPECT_EQ(all.strings.view(all.slices.category[3]), "kernel");
  EXPECT_EQ(all.strings.view(all.slices.category[4]), "");
  // Tracks and ranks of the appended rows.
  EXPECT_EQ(all.slices.track[3], TrackId(3));
  EXPECT_EQ(all.slices.track[4], TrackId(2));
  EXPECT_EQ(all.track(all.slices.track[3]).rank, 1u);
  // Args: collective args and op layout each shifted by their own table's size.
  ASSERT_TRUE(all.slices.flags[3] & kSliceCollectiveArgs);
  EXPECT_EQ(all.slices.args[3], 1u);
  const CollectiveArgs& ca = all.collective_args[all.slices.args[3]];
  EXPECT_EQ(all.strings.view(ca.collective), "allreduce");
  EXPECT_EQ(all.strings.view(ca.group), "b-group");
  EXPECT_EQ(ca.in_nelems, 100);
  ASSERT_TRUE(all.slices.flags[4] & kSliceOpLayout);
  EXPECT_EQ(all.op_layout[all.slices.args[4]].seq_id, 1);
  EXPECT_EQ(all.slices.args[5], kNoArgs);
  // Other columns.
  EXPECT_EQ(all.slices.step[4], 11);
  EXPECT_EQ(all.slices.step[3], -1);
  EXPECT_EQ(all.slices.correlation[3], 42);
  EXPECT_EQ(all.slices.ts_ns[5], 30);
  EXPECT_EQ(all.flows.track[1], TrackId(3));
  EXPECT_EQ(all.strings.view(all.flows.category[1]), "kernel");
  EXPECT_EQ(all.counters.track[1], TrackId(2));
  EXPECT_DOUBLE_EQ(all.counters.value[1], 1.5);
  // The first store's rows are untouched.
  EXPECT_EQ(all.strings.view(all.collective_args[0].group), "a-group");
  EXPECT_EQ(all.slices.args[1], 0u);
}

// Merge must give exactly the store that appending the parts in turn gives: ids, rows, order.
void ExpectSameStore(const TraceStore& a, const TraceStore& b) {
  ASSERT_EQ(a.strings.size(), b.strings.size());
  for (uint32_t id = 0; id < a.strings.size(); ++id)
    EXPECT_EQ(a.strings.view(StringId(id)), b.strings.view(StringId(id)));
  ASSERT_EQ(a.inputs.size(), b.inputs.size());
  for (size_t i = 0; i < a.inputs.size(); ++i) EXPECT_EQ(a.inputs[i].path, b.inputs[i].path);
  ASSERT_EQ(a.ranks.size(), b.ranks.size());
  for (size_t i = 0; i < a.ranks.size(); ++i) {
    EXPECT_EQ(a.ranks[i].rank, b.ranks[i].rank);
    EXPECT_EQ(a.ranks[i].input, b.ranks[i].input);
  }
  ASSERT_EQ(a.tracks.size(), b.tracks.size());
  for (size_t i = 0; i < a.tracks.size(); ++i) {
    EXPECT_EQ(a.tracks[i].rank, b.tracks[i].rank);
    EXPECT_EQ(a.tracks[i].name, b.tracks[i].name);
    EXPECT_EQ(a.tracks[i].tid, b.tracks[i].tid);
  }
  ASSERT_EQ(a.collective_args.size(), b.collective_args.size());
  for (size_t i = 0; i < a.collective_args.size(); ++i) {
    EXPECT_EQ(a.collective_args[i].collective, b.collective_args[i].collective);
    EXPECT_EQ(a.collective_args[i].group, b.collective_args[i].group);
  }
  ASSERT_EQ(a.op_layout.size(), b.op_layout.size());
  EXPECT_EQ(a.slices.ts_ns, b.slices.ts_ns);
  EXPECT_EQ(a.slices.dur_ns, b.slices.dur_ns);
  EXPECT_EQ(a.slices.correlation, b.slices.correlation);
  EXPECT_EQ(a.slices.name, b.slices.name);
  EXPECT_EQ(a.slices.category, b.slices.category);
  EXPECT_EQ(a.slices.track, b.slices.track);
  EXPECT_EQ(a.slices.args, b.slices.args);
  EXPECT_EQ(a.slices.step, b.slices.step);
  EXPECT_EQ(a.slices.flags, b.slices.flags);
  EXPECT_EQ(a.flows.id, b.flows.id);
  EXPECT_EQ(a.flows.ts_ns, b.flows.ts_ns);
  EXPECT_EQ(a.flows.track, b.flows.track);
  EXPECT_EQ(a.flows.category, b.flows.category);
  EXPECT_EQ(a.flows.phase, b.flows.phase);
  EXPECT_EQ(a.counters.track, b.counters.track);
  EXPECT_EQ(a.counters.ts_ns, b.counters.ts_ns);
  EXPECT_EQ(a.counters.value, b.counters.value);
}

TEST(TraceStore, MergeEqualsAppendingInTurn) {
  const std::vector<std::string> prefixes = {"a", "b", "c", "b", "d"};
  for (unsigned threads : {1u, 2u, 4u}) {
    TraceStore appended;
    std::vector<TraceStore> parts;
    for (size_t i = 0; i < prefixes.size(); ++i) {
      appended.append(MakeStore(prefixes[i], static_cast<int32_t>(i)));
      parts.push_back(MakeStore(prefixes[i], static_cast<int32_t>(i)));
    }
    const TraceStore merged = TraceStore::Merge(std::move(parts), threads);
    ASSERT_EQ(merged.slices.size(), 3 * prefixes.size());
    ExpectSameStore(appended, merged);
  }
}

TEST(TraceStore, MergeOfOneOrNone) {
  std::vector<TraceStore> one;
  one.push_back(MakeStore("a", 0));
  const TraceStore merged = TraceStore::Merge(std::move(one), 2);
  EXPECT_EQ(merged.slices.size(), 3u);
  EXPECT_EQ(TraceStore::Merge({}, 2).slices.size(), 0u);
}

TEST(TraceStore, ReleaseRowsLeavesExactTablesAndReusableSpares) {
  TraceStore s = MakeStore("a", 0);
  s.slices.reserve(1000);
  RowTables spare;
  s.release_rows(&spare);
  EXPECT_EQ(s.slices.ts_ns.capacity(), 3u);
  EXPECT_EQ(s.slices.size(), 3u);
  EXPECT_EQ(spare.slices.size(), 0u);
  EXPECT_GE(spare.slices.ts_ns.capacity(), 1000u);
  TraceStore next;
  next.adopt_rows(std::move(spare));
  EXPECT_EQ(next.slices.size(), 0u);
  EXPECT_GE(next.slices.ts_ns.capacity(), 1000u);
}

TEST(TraceStore, ColumnsStayTheSameLength) {
  TraceStore all = MakeStore("a", 0);
  all.append(MakeStore("b", 1));
  all.append(MakeStore("c", 2));
  const size_t n = all.slices.size();
  EXPECT_EQ(n, 9u);
  EXPECT_EQ(all.slices.dur_ns.size(), n);
  EXPECT_EQ(all.slices.correlation.size(), n);
  EXPECT_EQ(all.slices.name.size(), n);
  EXPECT_EQ(all.slices.category.size(), n);
  EXPECT_EQ(all.slices.track.size(), n);
  EXPECT_EQ(all.slices.args.size(), n);
  EXPECT_EQ(all.slices.step.size(), n);
  EXPECT_EQ(all.slices.flags.size(), n);
  for (size_t i = 0; i < n; ++i) ASSERT_LT(all.slices.track[i].value, all.tracks.size());
  for (const Track& t : all.tracks) ASSERT_LT(t.rank, all.ranks.size());
  for (const RankInfo& r : all.ranks) ASSERT_LT(r.input, all.inputs.size());
}

void ExpectResidentCostAtMost48(const TraceStore& s) {
  ASSERT_GT(s.slices.size(), 0u);
  const double per_slice = static_cast<double>(s.slices.memory_bytes()) / static_cast<double>(s.slices.size());
  EXPECT_LE(per_slice, 48.0) << s.slices.memory_bytes() << " bytes for " << s.slices.size() << " slices";
}

TEST(TraceStore, ResidentCostOfARealTrace) {
  const std::string path = testing::SharedDir() + "/datasets/hta/trace_filter/sampled_rank-0.json.gz";
  if (!testing::Exists(path)) GTEST_SKIP() << "dataset absent: " << path;
  LoadOptions options;
  options.threads = 1;
  auto job = LoadJob({path}, options);
  ASSERT_TRUE(job.ok()) << job.error();
  EXPECT_GT(job.value().store.slices.size(), 3000u);
  ExpectResidentCostAtMost48(job.value().store);
}

TEST(TraceStore, ResidentCostOfALargeGeneratedTrace) {
  constexpr int kEvents = 200000;
  std::string doc;
  doc.reserve(kEvents * 150);
  doc += R"({"distributedInfo": {"rank": 0}, "traceEvents": [)";
  for (int i = 0; i < kEvents; ++i) {
    if (i) doc += ',';
    if (i % 4 == 0) {
      doc += R"({"ph":"X","cat":"kernel","name":"kernel_)" + std::to_string(i % 97) + R"(","pid":0,"tid":7,"ts":)" +
             std::to_string(1000000 + i) + R"(.25,"dur":1.5,"args":{"stream":7,"correlation":)" + std::to_string(i) +
             "}}";
    } else {
      doc += R"({"ph":"X","cat":"cpu_op","name":"aten::op_)" + std::to_string(i % 211) + R"(","pid":1,"tid":)" +
             std::to_string(i % 3) + R"(,"ts":)" + std::to_string(1000000 + i) + R"(,"dur":2})";
    }
  }
  doc += "]}";
  testing::TempDir dir;
  testing::WriteGzip(dir.file("big.json.gz"), doc);
  LoadOptions options;
  options.threads = 1;
  auto job = LoadJob({dir.file("big.json.gz")}, options);
  ASSERT_TRUE(job.ok()) << job.error();
  ASSERT_EQ(job.value().store.slices.size(), static_cast<size_t>(kEvents));
  ExpectResidentCostAtMost48(job.value().store);
  // The whole store (strings, tracks, side tables) stays small too.
  EXPECT_LE(job.value().store.memory_bytes(), static_cast<size_t>(kEvents) * 48 + (1u << 20));
}

}  // namespace
}  // namespace strata
