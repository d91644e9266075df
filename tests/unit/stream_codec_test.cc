// The agent -> serve in-flight entry (agent/stream_codec.h) and the state of a rank it carries: a round trip
// keeps the state's kind, particulars and sentence; an entry of an agent older than `state_kind` (the sentence
// only) decodes to the same kind; a kind this version does not know keeps its sentence; a rank not looked up
// has no state either way.
#include <gtest/gtest.h>

#ifdef STRATA_HAVE_RECORDER

#include <string>

#include "agent/stream_codec.h"

namespace strata::agent {
namespace {

using diagnosis::RankState;
using diagnosis::RankStateKind;

diagnosis::RankInflight Idle(std::optional<RankState> state) {
  diagnosis::RankInflight r;
  r.rank = 3;
  r.seq = 41;
  r.last_progress_unix = 99.5;
  r.threshold_s = 5;
  r.world_size = 4;
  r.state = std::move(state);
  r.frame = "Python rank_main (job.py:60)";
  return r;
}

std::string Field(const StreamFields& fields, const std::string& name) {
  for (const auto& [k, v] : fields)
    if (k == name) return v;
  return "<absent>";
}

StreamFields Without(StreamFields fields, const std::string& name) {
  std::erase_if(fields, [&](const auto& kv) { return kv.first == name; });
  return fields;
}

TEST(StreamCodec, InflightKeepsTheStatesKindParticularsAndSentence) {
  const RankState killed{RankStateKind::kKilled, "9 (SIGKILL)", ""};
  const StreamFields fields = EncodeInflight(Idle(killed), "node-a", 100);
  EXPECT_EQ(Field(fields, "state"), "killed by signal 9 (SIGKILL)") << "serve's status and older serves read it";
  EXPECT_EQ(Field(fields, "state_kind"), "killed");
  const Expected<InflightEntry> back = DecodeInflight(fields);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back.value().inflight.state, killed);
  EXPECT_EQ(back.value().inflight.frame, "Python rank_main (job.py:60)");
  EXPECT_EQ(back.value().host, "node-a");
  // A state with a context too.
  const RankState inside{RankStateKind::kInsideAnother, "broadcast", "pg1"};
  EXPECT_EQ(DecodeInflight(EncodeInflight(Idle(inside), "node-a", 100)).value().inflight.state, inside);
}

TEST(StreamCodec, InflightWithoutAStateHasNone) {
  const StreamFields fields = EncodeInflight(Idle(std::nullopt), "node-a", 100);
  EXPECT_EQ(Field(fields, "state"), "");
  EXPECT_EQ(Field(fields, "state_kind"), "");
  EXPECT_FALSE(DecodeInflight(fields).value().inflight.state.has_value());
  EXPECT_FALSE(DecodeInflight(Without(fields, "state_kind")).value().inflight.state.has_value()) << "an older agent's";
}

// An agent before state_kind sent "state" alone: its sentence gives the kind (and particulars) once.
TEST(StreamCodec, AnOlderAgentsInflightDecodesItsKindFromTheSentence) {
  for (const RankState& s :
       {RankState{RankStateKind::kLock, "futex", ""}, RankState{RankStateKind::kIoWait, "", ""},
        RankState{RankStateKind::kUninterruptible, "", ""}, RankState{RankStateKind::kExited, "1", ""},
        RankState{RankStateKind::kOffCpu, "", ""}, RankState{RankStateKind::kNotObserved, "", ""}}) {
    StreamFields old = EncodeInflight(Idle(s), "node-a", 100);
    for (const char* field : {"state_kind", "state_detail", "state_context"}) old = Without(old, field);
    const Expected<InflightEntry> back = DecodeInflight(old);
    ASSERT_TRUE(back.ok()) << back.error();
    EXPECT_EQ(back.value().inflight.state, s) << diagnosis::StateText(s);
  }
  EXPECT_EQ(StateOfOldAgent("waiting for I/O (read)"), (RankState{RankStateKind::kIoWait, "read", ""}));
  EXPECT_FALSE(StateOfOldAgent("").has_value());
}

TEST(StreamCodec, AKindThisVersionDoesNotKnowKeepsItsSentence) {
  StreamFields fields = EncodeInflight(Idle(RankState{RankStateKind::kLock, "futex", ""}), "node-a", 100);
  for (auto& [k, v] : fields) {
    if (k == "state_kind") v = "parked";
    if (k == "state") v = "parked in a new way";
  }
  EXPECT_EQ(DecodeInflight(fields).value().inflight.state,
            (RankState{RankStateKind::kUnrecognized, "parked in a new way", ""}));
}

}  // namespace
}  // namespace strata::agent

#endif  // STRATA_HAVE_RECORDER
