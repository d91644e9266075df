// JobResume (see job_resume.h).
#include "agent/job_resume.h"

#include <algorithm>

namespace strata::agent {

bool JobResume::AlreadyReplayed(const std::string& id) const {
  return replayed_through_ != std::pair<uint64_t, uint64_t>{0, 0} && StreamIdOrder(id) <= replayed_through_;
}

bool JobResume::JudgedBefore(const online::RankStepSummary& s) const {
  const auto it = base_.judged_own.find(s.rank);
  if (it != base_.judged_own.end() && s.step <= it->second) return true;
  return base_.judged_start > 0 && s.start_unix > 0 && s.start_unix < base_.judged_start + 0.5 * s.step_s;
}

void JobResume::Took(const std::string& id) {
  if (last_taken_.empty() || StreamIdOrder(id) > StreamIdOrder(last_taken_)) last_taken_ = id;
}

void JobResume::TookSummary(const std::string& id, int32_t rank, int64_t own) {
  Took(id);
  unjudged_.push_back({id, rank, own});
}

void JobResume::Prune(const OnlineView& view) {
  std::erase_if(unjudged_, [&](const Unjudged& u) {
    const auto it = view.judged_own.find(u.rank);
    return it != view.judged_own.end() && u.own <= it->second;
  });
}

JobCommit JobResume::Record(const std::string& owner, const OnlineView* view) const {
  JobCommit c = base_;
  c.owner = owner;
  if (view) {
    c.steps_judged += view->steps_judged;
    c.summaries_judged += view->summaries_judged;
    c.judged_start = std::max(c.judged_start, view->judged_through_start);
    for (const auto& [rank, own] : view->judged_own) {
      auto [it, inserted] = c.judged_own.emplace(rank, own);
      if (!inserted) it->second = std::max(it->second, own);
      if (view->judged_through >= 0) c.offset[rank] = view->judged_through - own;  // this serve's anchoring
    }
    c.job_step = std::max(c.job_step, view->judged_through);
  }
  if (!unjudged_.empty()) {
    c.resume_from = std::min_element(unjudged_.begin(), unjudged_.end(), [](const Unjudged& a, const Unjudged& b) {
                      return StreamIdOrder(a.id) < StreamIdOrder(b.id);
                    })->id;
  } else if (!last_taken_.empty()) {
    c.resume_from = "(" + last_taken_;
  }
  return c;
}

}  // namespace strata::agent
