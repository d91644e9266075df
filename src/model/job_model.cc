// The job model, built once (see job_model.h).
#include "model/job_model.h"

namespace strata::model {

JobModel BuildJobModel(const TraceStore& store, const std::vector<SliceRows>& rows_by_rank) {
  JobModel job;
  job.steps = FindSteps(store, rows_by_rank);
  job.collectives = MatchCollectives(store, rows_by_rank, &job.steps);
  job.clocks = AlignClocks(job.collectives, store.ranks.size());
  return job;
}

}  // namespace strata::model
