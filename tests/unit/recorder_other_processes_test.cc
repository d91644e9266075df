// OtherProcesses (recorder/other_processes.h): a process outside the traced set that took a traced thread's CPU is
// named once in the segment, by /proc's comm when it still runs, else by the comm the kernel gave with the event;
// idle (pid 0) and traced processes never are.
#include <gtest/gtest.h>

#ifdef STRATA_HAVE_RECORDER
#include <map>
#include <string>

#include "recorder/other_processes.h"

namespace strata::recorder {
namespace {

TEST(OtherProcesses, EachProcessIsNamedOnceAndNeverIdleOrATracedOne) {
  std::map<int, std::string> running = {{200, "cc1plus"}, {300, "kworker/0:1"}};
  int lookups = 0;
  OtherProcesses others([&](int pid) {
    ++lookups;
    auto it = running.find(pid);
    return it == running.end() ? std::string() : it->second;
  });
  auto first = others.FirstSight(200, false);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ((*first)["type"], "other_process");
  EXPECT_EQ((*first)["pid"], 200);
  EXPECT_EQ((*first)["comm"], "cc1plus");
  EXPECT_FALSE(others.FirstSight(200, false).has_value()) << "a second sight writes nothing";
  EXPECT_FALSE(others.FirstSight(200, false, "other").has_value());
  EXPECT_FALSE(others.FirstSight(0, false, "swapper/0").has_value()) << "idle is no process";
  EXPECT_FALSE(others.FirstSight(100, true).has_value()) << "a traced process is not an other";
  EXPECT_EQ(lookups, 1) << "/proc is read once per process, on its first sight";
  EXPECT_EQ((*others.FirstSight(300, false, "ignored"))["comm"], "kworker/0:1") << "/proc's name comes first";
}

TEST(OtherProcesses, AProcessGoneFromProcIsNamedByTheEventsComm) {
  OtherProcesses others([](int) { return std::string(); });
  EXPECT_EQ((*others.FirstSight(400, false, "make"))["comm"], "make");
  EXPECT_EQ((*others.FirstSight(401, false))["comm"], "") << "no name known: empty, still recorded once";
  // the kernel's fixed-size field, cut at its first NUL
  EXPECT_EQ((*others.FirstSight(402, false, std::string_view("gcc\0\0\0\0", 7)))["comm"], "gcc");
}

}  // namespace
}  // namespace strata::recorder
#endif  // STRATA_HAVE_RECORDER
