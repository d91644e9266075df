// RecordingNotes (recorder/recording_notes.h): every note kept in order for the segment's meta record, each told
// as it arrives, a repeated AddOnce note neither kept nor told again, a kept-only note never told.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "recorder/recording_notes.h"

namespace strata::recorder {
namespace {

TEST(RecordingNotes, KeepsEveryNoteInOrderAndTellsEachAsItArrives) {
  std::vector<std::string> told;
  RecordingNotes notes([&](const std::string& line) { told.push_back(line); });
  notes.Add("no process with pid 7: left out");
  notes.Keep("probe gloo::allreduce: not found in libgloo.so");
  notes.Add("the disk is full");
  EXPECT_EQ(notes.all(),
            (std::vector<std::string>{"no process with pid 7: left out",
                                      "probe gloo::allreduce: not found in libgloo.so", "the disk is full"}));
  EXPECT_EQ(told, (std::vector<std::string>{"no process with pid 7: left out", "the disk is full"}));
}

TEST(RecordingNotes, AnAddOnceNoteComesOnceHoweverOftenItIsGiven) {
  std::vector<std::string> told;
  RecordingNotes notes([&](const std::string& line) { told.push_back(line); });
  for (int i = 0; i < 3; ++i) notes.AddOnce("pid 12: not a CPython this recorder can read");
  notes.AddOnce("pid 13: no symbols");
  notes.Add("pid 13: no symbols");  // Add never deduplicates
  EXPECT_EQ(notes.all(), (std::vector<std::string>{"pid 12: not a CPython this recorder can read", "pid 13: no symbols",
                                                   "pid 13: no symbols"}));
  EXPECT_EQ(told, notes.all());
}

TEST(RecordingNotes, WithoutAListenerNotesAreStillKept) {
  RecordingNotes notes(nullptr);
  notes.Add("a");
  notes.AddOnce("b");
  EXPECT_EQ(notes.all(), (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace strata::recorder
