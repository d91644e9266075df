// A test that skips when STRATA_TEST_SKIP=1, for tests/cli/check_ci_skip_rule.sh: the unit tests' main must
// turn that skip into a failed run when CI=true. Without STRATA_TEST_SKIP it asserts something and passes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

TEST(CiSkipRule, SkipsWhenAsked) {
  const char* skip = std::getenv("STRATA_TEST_SKIP");
  if (skip != nullptr && std::string(skip) == "1") GTEST_SKIP() << "asked to skip (STRATA_TEST_SKIP=1)";
  EXPECT_EQ(std::string("strata").size(), 6u);
}
