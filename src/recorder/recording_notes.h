// RecordingNotes: what the recorder has to say about a recording (a probe that could not attach, a process
// gone before it was traced, a full disk), kept for the segment's final "meta" record's "notes" list and, as
// each arrives, told to the person running the recorder.
// Invariants: notes are kept in the order they arrived; a note added with AddOnce is kept (and told) the first
// time only, however often the same text comes again (a Python process's note per new process of it); a note
// added with Keep is kept and not told (the probes' notes: `inspect` lists them).
#pragma once

#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace strata::recorder {

class RecordingNotes {
 public:
  /// `tell(line)`: shows a line to the person running the recorder (may be empty: nothing is shown).
  explicit RecordingNotes(std::function<void(const std::string&)> tell) : tell_(std::move(tell)) {}

  /// Kept and told.
  void Add(const std::string& note) {
    notes_.push_back(note);
    if (tell_) tell_(note);
  }

  /// Kept and told the first time this text comes; nothing after that.
  void AddOnce(const std::string& note) {
    if (once_.insert(note).second) Add(note);
  }

  /// Kept, not told.
  void Keep(const std::string& note) { notes_.push_back(note); }

  const std::vector<std::string>& all() const { return notes_; }

 private:
  std::function<void(const std::string&)> tell_;
  std::vector<std::string> notes_;
  std::set<std::string> once_;
};

}  // namespace strata::recorder
