// JobResume: what the serve owning a job keeps so that the job's next owner resumes without judging a step
// twice or losing one (issue 49 item 2). It starts from the judged record the job had when this serve took it
// (job_commit.h): summaries of a rank at or below the record's step for that rank, and summaries of any rank
// whose step started by the record's last judged step (a rank the earlier owner had not seen, or whose
// summaries came after it judged the step without them), were judged by an earlier owner and are skipped; the
// entries from the record's resume point on are replayed (StreamConsumer::Replay), and the consumer group's
// later deliveries of the same entries are skipped by id. It tracks the summaries taken in whose steps are not
// judged yet, so the record it writes resumes at the oldest of them.
// Invariants: the record written never goes back: its steps per rank and its last judged start are the larger
// of the record taken over and this serve's, its steps_judged the record's plus this serve's; `resume_from` is
// never past an entry taken in and not yet judged.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "agent/job_commit.h"
#include "agent/online_job.h"

namespace strata::agent {

class JobResume {
 public:
  JobResume() = default;
  /// From the record the job had when taken (`had_record` false: a new job, nothing judged before).
  JobResume(JobCommit base, bool had_record) : base_(std::move(base)), had_record_(had_record) {}

  bool had_record() const { return had_record_; }
  const JobCommit& base() const { return base_; }
  /// The replay read entries up to `id` (the last one): group deliveries up to it are skipped.
  void Replayed(const std::string& id) { replayed_through_ = StreamIdOrder(id); }
  /// A group delivery the replay already took in.
  bool AlreadyReplayed(const std::string& id) const;
  /// A summary an earlier owner judged: at or below its rank's step in the record, or, when both starts are
  /// known, starting before half a step past the record's last judged step.
  bool JudgedBefore(const online::RankStepSummary& s) const;
  /// An entry taken in: a summary (rank, own step) waits to be judged; any entry moves the resume point.
  void TookSummary(const std::string& id, int32_t rank, int64_t own);
  void Took(const std::string& id);
  /// Forgets the summaries whose steps `view` has judged.
  void Prune(const OnlineView& view);
  /// The record to write now: `owner`, the steps judged so far by every owner, where to resume.
  JobCommit Record(const std::string& owner, const OnlineView* view) const;
  size_t unjudged() const { return unjudged_.size(); }
  uint64_t skipped_judged() const { return skipped_judged_; }
  void CountSkippedJudged() { ++skipped_judged_; }

 private:
  struct Unjudged {
    std::string id;
    int32_t rank = 0;
    int64_t own = 0;
  };
  JobCommit base_;
  bool had_record_ = false;
  std::pair<uint64_t, uint64_t> replayed_through_{0, 0};
  std::vector<Unjudged> unjudged_;  // summaries taken in, steps not judged yet
  std::string last_taken_;          // the newest entry taken in
  uint64_t skipped_judged_ = 0;
};

}  // namespace strata::agent
