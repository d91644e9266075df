// The --redis URL of RedisConnection (issue 49 item 1): seed nodes, ACL credentials, and errors that name
// the argument and the servers without the password.
#include <gtest/gtest.h>

#include "agent/redis_connection.h"

namespace strata::agent {
namespace {

TEST(RedisUrl, OneServerSeedsAndCredentials) {
  auto one = ParseRedisUrl("redis://h");
  ASSERT_TRUE(one.ok()) << one.error();
  ASSERT_EQ(one.value().seeds.size(), 1u);
  EXPECT_EQ(one.value().seeds[0].port, 6379);
  EXPECT_TRUE(one.value().credentials.empty());
  auto seeds = ParseRedisUrl("redis://alice:s3cr:et@h1:7000,h2:7001,h3/");
  ASSERT_TRUE(seeds.ok()) << seeds.error();
  ASSERT_EQ(seeds.value().seeds.size(), 3u);
  EXPECT_EQ(seeds.value().seeds[1].Text(), "h2:7001");
  EXPECT_EQ(seeds.value().seeds[2].Text(), "h3:6379");
  EXPECT_EQ(seeds.value().credentials.user, "alice");
  EXPECT_EQ(seeds.value().credentials.password, "s3cr:et");
  EXPECT_EQ(seeds.value().Text(), "redis://alice@h1:7000,h2:7001,h3:6379");  // no password
  auto default_user = ParseRedisUrl("redis://:pw@h:1");
  ASSERT_TRUE(default_user.ok()) << default_user.error();
  EXPECT_EQ(default_user.value().credentials.user, "");
  EXPECT_EQ(default_user.value().credentials.password, "pw");
}

TEST(RedisUrl, BadUrlsNameTheArgumentButNotThePassword) {
  for (const char* bad : {"http://x:1", "redis://x:99999", "redis://", "redis://h1:1,,h2:2", "redis://h:port",
                          "redis://u:topsecret@h:0", "redis://nopassword@h:1", "redis://u:topsecret@"}) {
    auto a = ParseRedisUrl(bad);
    ASSERT_FALSE(a.ok()) << bad;
    EXPECT_NE(a.error().find("--redis '"), std::string::npos) << a.error();
    EXPECT_EQ(a.error().find("topsecret"), std::string::npos) << a.error();
  }
  EXPECT_NE(ParseRedisUrl("redis://x:99999").error().find("99999"), std::string::npos);
}

TEST(RedisUrl, AnUnreachableServerSaysWhereWithoutThePassword) {
  RedisConnection c;
  auto a = ParseRedisUrl("redis://u:topsecret@127.0.0.1:1,127.0.0.1:2");
  ASSERT_TRUE(a.ok());
  const Status st = c.Connect(a.value(), 0.5);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("127.0.0.1:1"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("127.0.0.1:2"), std::string::npos) << st.message();
  EXPECT_EQ(st.message().find("topsecret"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace strata::agent
