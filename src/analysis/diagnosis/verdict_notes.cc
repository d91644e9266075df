// The verdict-changing notes' rendering (see verdict_notes.h).
#include "analysis/diagnosis/verdict_notes.h"

namespace strata::diagnosis {

std::string NoteText(const VerdictNote& note) {
  const std::string_view wording = ReasonOf(note.id).wording;
  std::string out;
  out.reserve(wording.size() + 16 * note.details.size());
  size_t next = 0, from = 0;
  for (size_t at = wording.find("{}"); at != std::string_view::npos; at = wording.find("{}", from)) {
    out.append(wording.substr(from, at - from));
    if (next < note.details.size()) out += note.details[next];
    ++next;
    from = at + 2;
  }
  out.append(wording.substr(from));
  return out;
}

std::vector<std::string> NoteTexts(const std::vector<VerdictNote>& notes, NoteEffect effect) {
  std::vector<std::string> out;
  for (const VerdictNote& n : notes)
    if (n.effect() == effect) out.push_back(NoteText(n));
  return out;
}

}  // namespace strata::diagnosis
