// Tests of the text reports' shared formatting (reports/text_format.h): three significant digits, scaled
// durations, clipping and table alignment.
#include <gtest/gtest.h>

#include "reports/text_format.h"

namespace strata::text {
namespace {

TEST(TextFormat, Sig3KeepsThreeSignificantDigits) {
  EXPECT_EQ(Sig3(22.995936), "23.0");
  EXPECT_EQ(Sig3(0.6566), "0.657");
  EXPECT_EQ(Sig3(1.4885), "1.49");
  EXPECT_EQ(Sig3(51.43), "51.4");
  EXPECT_EQ(Sig3(412.4), "412");
  EXPECT_EQ(Sig3(12345.6), "12346");
  EXPECT_EQ(Sig3(9.996), "10.0");
  EXPECT_EQ(Sig3(0.0012345), "0.00123");
  EXPECT_EQ(Sig3(-3.14159), "-3.14");
  EXPECT_EQ(Sig3(0), "0");
}

TEST(TextFormat, DurationScalesToMicroMilliOrSeconds) {
  EXPECT_EQ(Duration(22995.936), "23.0 s");
  EXPECT_EQ(Duration(0.4124), "412 µs");
  EXPECT_EQ(Duration(1.5), "1.50 ms");
  EXPECT_EQ(Duration(999.95), "1.00 s");
  EXPECT_EQ(Duration(0.99996), "1.00 ms");
  EXPECT_EQ(Duration(0.0005), "0.500 µs");
  EXPECT_EQ(Duration(0), "0 ms");
  EXPECT_EQ(Duration(-2500), "-2.50 s");
}

TEST(TextFormat, PercentAndClip) {
  EXPECT_EQ(Percent(51.4321), "51.4%");
  EXPECT_EQ(Clip("abcdefghij", 6), "abc...");
  EXPECT_EQ(Clip("abc", 6), "abc");
  EXPECT_EQ(Columns("412 µs"), 6u);
  EXPECT_EQ(Clip("µµµµµµµµ", 5), "µµ...");
}

TEST(TextFormat, TableAlignsColumnsByCodePoints) {
  Table t({"name", ">time"});
  t.Add({"allreduce", "412 µs"});
  t.Add({"mm", "23.0 s"});
  EXPECT_EQ(t.Render("  "),
            "  name         time\n"
            "  allreduce  412 µs\n"
            "  mm         23.0 s\n");
}

}  // namespace
}  // namespace strata::text

namespace strata::text {
namespace {

TEST(TextFormat, WrapIndentsContinuationLines) {
  EXPECT_EQ(Wrap("one two three four", 10, "  ", 2), "  one two\n    three\n    four\n");
  EXPECT_EQ(Wrap("short", 40, "", 0), "short\n");
}

// Long names are shortened in the middle, so names that differ at either end stay different (issue 51).
TEST(TextFormat, ShortenMiddleKeepsBothEnds) {
  EXPECT_EQ(ShortenMiddle("abcdefghij", 5), "ab…ij");
  EXPECT_EQ(ShortenMiddle("abcdefghij", 6), "abc…ij");
  EXPECT_EQ(ShortenMiddle("abcdefghij", 10), "abcdefghij");
  EXPECT_EQ(Columns(ShortenMiddle("µµµµµµµµµµµµ", 7)), 7u);
  EXPECT_NE(ShortenMiddle("kernel_with_a_long_body_64x3_nn", 16), ShortenMiddle("kernel_with_a_long_body_64x3_tn", 16));
}

// A word longer than the line is shortened in the middle: its end (a figure, a suffix) survives.
TEST(TextFormat, WrapShortensAWordLongerThanTheLine) {
  const std::string wrapped = Wrap("see abcdefghijklmnopqrstuvwxyz_42 now", 12, "", 0);
  EXPECT_EQ(wrapped, "see\nabcdef…yz_42\nnow\n");
}

TEST(TextFormat, CountIsSingularForOne) {
  EXPECT_EQ(Count(1, "rank"), "1 rank");
  EXPECT_EQ(Count(0, "step"), "0 steps");
  EXPECT_EQ(Count(52, "rank"), "52 ranks");
  EXPECT_EQ(Count(1, "call"), "1 call");
}

TEST(TextFormat, IntRangesCompactsRuns) {
  EXPECT_EQ(IntRanges({1, 2, 3, 4, 5}), "1-5");
  EXPECT_EQ(IntRanges({4, 6, 9, 10, 11, 12}), "4,6,9-12");
  EXPECT_EQ(IntRanges({1, 3, 5, 7}, 2), "1,3,... (4 in all)");
  EXPECT_EQ(IntRanges({}), "none");
}

}  // namespace
}  // namespace strata::text
