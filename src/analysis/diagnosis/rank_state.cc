// The wordings of a rank's states, rendered and read back (see rank_state.h).
#include "analysis/diagnosis/rank_state.h"

#include <algorithm>
#include <vector>

#include "analysis/diagnosis/contract_vocabulary.h"

namespace strata::diagnosis {
namespace {

inline constexpr std::array<std::string_view, kRankStateKinds> kStateKindKeys = {
    "not_observed",    "on_cpu",  "runnable",           "lock",           "io_wait",         "sleeping",
    "child_wait",      "paused",  "in_syscall",         "off_cpu",        "uninterruptible", "exited",
    "exited_normally", "killed",  "kernel_not_started", "not_recorded",   "not_reported",    "whereabouts_not_reported",
    "inside_another",  "no_dump", "work_not_started",   "never_enqueued", "unrecognized"};

// Every wording of every kind: "{d}" stands for the detail, "{c}" for the context. A kind with several has one
// per set of particulars it may carry; kUnrecognized's is the sentence itself.
struct StateWording {
  RankStateKind kind;
  std::string_view text;
};
constexpr StateWording kStateWordings[] = {
    {RankStateKind::kNotObserved, "not observed (no sample or scheduler event of its main thread during the stall)"},
    {RankStateKind::kOnCpu, "on CPU (spinning)"},
    {RankStateKind::kRunnable, "runnable, waiting for a CPU"},
    {RankStateKind::kLock, "blocked on a lock ({d})"},
    {RankStateKind::kLock, "blocked on a lock"},
    {RankStateKind::kIoWait, "waiting for I/O ({d})"},
    {RankStateKind::kIoWait, "waiting for I/O"},
    {RankStateKind::kSleeping, "sleeping ({d})"},
    {RankStateKind::kSleeping, "sleeping"},
    {RankStateKind::kChildWait, "waiting for a child process"},
    {RankStateKind::kPaused, "paused ({d})"},
    {RankStateKind::kPaused, "paused"},
    {RankStateKind::kInSyscall, "sleeping in system call {d}"},
    {RankStateKind::kOffCpu, "sleeping (off CPU)"},
    {RankStateKind::kUninterruptible, "in uninterruptible I/O (D state)"},
    {RankStateKind::kExited, "exited with code {d}"},
    {RankStateKind::kExited, "exited"},
    {RankStateKind::kExitedNormally, "exited normally (code 0)"},
    {RankStateKind::kKilled, "killed by signal {d}"},
    {RankStateKind::kKernelNotStarted, "kernel not started (called the collective; its kernel never ran)"},
    {RankStateKind::kNotRecorded, "not recorded (no process of this rank was seen)"},
    {RankStateKind::kNotReported, "not reported by any agent"},
    {RankStateKind::kWhereaboutsNotReported, "not inside the collective (its whereabouts not reported)"},
    {RankStateKind::kInsideAnother, "inside {d} ({c})"},
    {RankStateKind::kNoDump, "no dump of it among the inputs; its peers' dumps show it never enqueued #{d}"},
    {RankStateKind::kWorkNotStarted, "enqueued #{d} but its work never started while its peers' did"},
    {RankStateKind::kNeverEnqueued, "never enqueued #{d}: its dump holds no entry of the group"},
    {RankStateKind::kNeverEnqueued, "never enqueued #{d}; its last entry of the group: {c}"},
    {RankStateKind::kUnrecognized, "{d}"},
};

constexpr std::string_view kDetailPlace = "{d}", kContextPlace = "{c}";

bool HasPlace(std::string_view text, std::string_view slot) { return text.find(slot) != std::string_view::npos; }

// The wording of s's kind with a place for exactly the particulars it carries, else the kind's first.
const StateWording& StateWordingOf(const RankState& s) {
  const StateWording* first = nullptr;
  for (const StateWording& w : kStateWordings) {
    if (w.kind != s.kind) continue;
    if (!first) first = &w;
    if (HasPlace(w.text, kDetailPlace) == !s.detail.empty() && HasPlace(w.text, kContextPlace) == !s.context.empty())
      return w;
  }
  return *first;
}

// `text` cut at its places: the pieces between them, and the places in order ("{d}" before "{c}").
struct WordingCut {
  std::vector<std::string_view> pieces;
  std::vector<std::string_view> slots;
};
WordingCut CutStateWording(std::string_view text) {
  WordingCut out;
  size_t at = 0;
  for (size_t open = text.find('{'); open != std::string_view::npos; open = text.find('{', at)) {
    out.pieces.push_back(text.substr(at, open - at));
    out.slots.push_back(text.substr(open, 3));
    at = open + 3;
  }
  out.pieces.push_back(text.substr(at));
  return out;
}

// The state `sentence` is if it is worded as `w`: each place non-empty, taken up to the next piece's first
// occurrence; none when it is worded otherwise.
std::optional<RankState> MatchStateWording(const StateWording& w, std::string_view sentence) {
  const WordingCut cut = CutStateWording(w.text);
  if (!sentence.starts_with(cut.pieces.front())) return std::nullopt;
  RankState s{w.kind, "", ""};
  size_t at = cut.pieces.front().size();
  for (size_t i = 0; i < cut.slots.size(); ++i) {
    const std::string_view next = cut.pieces[i + 1];
    const bool last = i + 1 == cut.slots.size();
    const size_t end = last ? sentence.size() - std::min(sentence.size(), next.size()) : sentence.find(next, at + 1);
    if (end == std::string_view::npos || end <= at || (last && !sentence.ends_with(next))) return std::nullopt;
    (cut.slots[i] == kDetailPlace ? s.detail : s.context) = std::string(sentence.substr(at, end - at));
    at = end + next.size();
  }
  if (cut.slots.empty() && sentence != w.text) return std::nullopt;
  return s;
}

}  // namespace

std::string StateText(const RankState& s) {
  std::string out;
  const WordingCut cut = CutStateWording(StateWordingOf(s).text);
  for (size_t i = 0; i < cut.pieces.size(); ++i) {
    out += cut.pieces[i];
    if (i < cut.slots.size()) out += cut.slots[i] == kDetailPlace ? s.detail : s.context;
  }
  return out;
}

RankState StateOfSentence(std::string_view sentence) {
  // Whole wordings first ("sleeping (off CPU)" is kOffCpu, not kSleeping's "sleeping ({d})"), then those with
  // places, in the table's order; kUnrecognized's matches every sentence, so it is the last resort.
  for (const bool whole : {true, false})
    for (const StateWording& w : kStateWordings)
      if (HasPlace(w.text, "{") != whole && w.kind != RankStateKind::kUnrecognized)
        if (std::optional<RankState> s = MatchStateWording(w, sentence)) return *s;
  return {RankStateKind::kUnrecognized, std::string(sentence), ""};
}

std::string_view RankStateKindKey(RankStateKind k) { return kStateKindKeys[static_cast<size_t>(k)]; }

std::optional<RankStateKind> ParseRankStateKind(std::string_view key) {
  return ParseByName<RankStateKind>(kStateKindKeys, key);
}

bool WhereaboutsUnreported(RankStateKind k) {
  return k == RankStateKind::kNotReported || k == RankStateKind::kWhereaboutsNotReported;
}

}  // namespace strata::diagnosis
