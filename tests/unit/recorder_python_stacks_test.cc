// PythonStacks (recorder/python_stacks.h): each distinct Python stack of a process gets a dense id once, with
// the one "py_stack" record that names it; the same lines share an id, another process does not; an empty
// stack is -1; a forgotten process has no offsets and its pid's stacks start afresh. Code objects at addresses
// this process has not mapped cannot be read, so their frames are named "?" (python_frames.h), which keeps the
// test free of a live interpreter.
#include <gtest/gtest.h>

#ifdef STRATA_HAVE_RECORDER
#include <unistd.h>

#include "recorder/python_stacks.h"

namespace strata::recorder {
namespace {

const uint32_t kSelf = static_cast<uint32_t>(::getpid());

TEST(PythonStacks, EachDistinctStackGetsTheNextIdAndOneRecord) {
  PythonStacks stacks;
  const std::vector<PythonFrameAddress> a{{0x10, 0}, {0x20, 0}}, b{{0x30, 0}};
  const auto first = stacks.Intern(kSelf, a);
  EXPECT_EQ(first.id, 0);
  ASSERT_TRUE(first.record);
  EXPECT_EQ((*first.record)["type"], "py_stack");
  EXPECT_EQ((*first.record)["pid"], kSelf);
  EXPECT_EQ((*first.record)["id"], 0);
  ASSERT_EQ((*first.record)["frames"].size(), 2u);
  EXPECT_EQ((*first.record)["frames"][0]["fn"], "?") << "an unreadable code object";
  const auto again = stacks.Intern(kSelf, a);
  EXPECT_EQ(again.id, 0);
  EXPECT_FALSE(again.record) << "a stack is named once";
  EXPECT_EQ(stacks.Intern(kSelf, b).id, 1);
  const auto other = stacks.Intern(kSelf + 1, a);
  EXPECT_EQ(other.id, 2) << "the same addresses in another process are another stack";
  EXPECT_TRUE(other.record);
  EXPECT_EQ(stacks.Intern(kSelf, {}).id, -1);
  EXPECT_FALSE(stacks.Intern(kSelf, {}).record);
}

TEST(PythonStacks, OnlyWatchedProcessesHaveOffsetsUntilForgotten) {
  PythonStacks stacks;
  EXPECT_EQ(stacks.OffsetsOf(static_cast<int>(kSelf)), nullptr);
  EXPECT_EQ(stacks.ReadNow(static_cast<int>(kSelf), ::getpid()).id, -1) << "not watched: nothing read";
  stacks.Watch(static_cast<int>(kSelf), strata_py_offsets{});
  EXPECT_NE(stacks.OffsetsOf(static_cast<int>(kSelf)), nullptr);
  EXPECT_EQ(stacks.Intern(kSelf, {{0x10, 0}}).id, 0);
  EXPECT_EQ(stacks.Intern(kSelf + 1, {{0x10, 0}}).id, 1);
  stacks.Forget(static_cast<int>(kSelf));
  EXPECT_EQ(stacks.OffsetsOf(static_cast<int>(kSelf)), nullptr);
  const auto back = stacks.Intern(kSelf, {{0x10, 0}});
  EXPECT_EQ(back.id, 2) << "a pid that comes back is another process: a new id, never a reused one";
  EXPECT_TRUE(back.record) << "and its own record";
  EXPECT_EQ(stacks.Intern(kSelf + 1, {{0x10, 0}}).id, 1) << "another process's stacks stay";
}

}  // namespace
}  // namespace strata::recorder
#endif
