// Redis Cluster's hash slot function (issue 49 item 1) against the values the cluster specification and
// Redis's documentation give, the hash tags of strata's job keys, and the key each command strata sends is
// routed by.
#include <gtest/gtest.h>

#include "agent/redis_slots.h"
#include "agent/stream_codec.h"

namespace strata::agent {
namespace {

TEST(RedisSlots, Crc16XmodemOfTheCheckString) {
  EXPECT_EQ(Crc16Xmodem("123456789"), 0x31C3);
  EXPECT_EQ(Crc16Xmodem(""), 0);
}

TEST(RedisSlots, KnownSlotsAndHashTags) {
  EXPECT_EQ(KeySlot("foo"), 12182);  // redis.io, CLUSTER KEYSLOT
  EXPECT_EQ(KeySlot("{user1000}.following"), KeySlot("{user1000}.followers"));
  EXPECT_EQ(KeySlot("{user1000}.following"), KeySlot("user1000"));
  EXPECT_EQ(KeySlot("foo{}{bar}"), Crc16Xmodem("foo{}{bar}") % kRedisSlots);  // an empty tag: the whole key
  EXPECT_EQ(KeySlot("foo{{bar}}zap"), KeySlot("{bar"));                       // the first { to the next }
  EXPECT_EQ(KeySlot("foo{bar}{zap}"), KeySlot("bar"));
  EXPECT_EQ(KeySlot("no-close{tag"), Crc16Xmodem("no-close{tag") % kRedisSlots);
}

TEST(RedisSlots, EveryKeyOfAJobIsInTheJobsSlot) {
  const std::string job = "job-42";
  EXPECT_EQ(KeySlot(StepsStreamKey(job)), KeySlot(job));
  EXPECT_EQ(KeySlot(RequestsStreamKey(job)), KeySlot(job));
}

TEST(RedisSlots, TheKeyACommandIsRoutedBy) {
  EXPECT_EQ(CommandKey({"XADD", "k", "*", "a", "1"}), "k");
  EXPECT_EQ(CommandKey({"XGROUP", "CREATE", "k", "g", "0", "MKSTREAM"}), "k");
  EXPECT_EQ(CommandKey({"XREADGROUP", "GROUP", "g", "c", "COUNT", "5", "streams", "k1", "k2", ">", ">"}), "k1");
  EXPECT_EQ(CommandKey({"XREAD", "COUNT", "100", "STREAMS", "k", "0"}), "k");
  EXPECT_EQ(CommandKey({"PING"}), std::nullopt);
  EXPECT_EQ(CommandKey({"EVAL", "return 1", "2", "k1", "k2", "a"}), "k1");
  EXPECT_EQ(CommandKey({"EVAL", "return 1", "0"}), std::nullopt);
  EXPECT_EQ(CommandKey({"WAIT", "1", "100"}), std::nullopt);
  EXPECT_EQ(CommandKey({"CLUSTER", "SLOTS"}), std::nullopt);
  EXPECT_EQ(CommandKey({"AUTH", "user", "secret"}), std::nullopt);
}

}  // namespace
}  // namespace strata::agent
