// The unit tests' main: GoogleTest's, plus one rule of the project's CI -- a skipped test is not a passed
// test. When the environment has CI=true, a run in which any test was skipped (GTEST_SKIP: a dataset
// absent, not root, a tool missing) exits 1 after naming the skipped tests.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  const char* ci = std::getenv("CI");
  if (rc != 0 || ci == nullptr || std::strcmp(ci, "true") != 0) return rc;
  const testing::UnitTest& unit = *testing::UnitTest::GetInstance();
  int skipped = 0;
  for (int i = 0; i < unit.total_test_suite_count(); ++i) {
    const testing::TestSuite& suite = *unit.GetTestSuite(i);
    for (int j = 0; j < suite.total_test_count(); ++j) {
      const testing::TestInfo& test = *suite.GetTestInfo(j);
      if (test.should_run() && test.result()->Skipped()) {
        std::fprintf(stderr, "CI=true: %s.%s was skipped, which fails the run\n", suite.name(), test.name());
        ++skipped;
      }
    }
  }
  return skipped > 0 ? 1 : 0;
}
