// The KAIR panel's KS divergence between a trace's ranks (drawn_facts.h, KsDivergence), by the one KS rule
// (ks_divergence.h) over the samples the diagnosis compared:
//  - jobs of the data-parallel path (no role subgroups): each rank's own-work phases (straggler.h,
//    OwnWorkSamples) over the phases the path compared (BuildPhases, or their collectives as units when the
//    result says it compared over collectives), scored among all ranks as straggler localization scores them:
//    a rank's score is its straggler evidence's ks_score;
//  - jobs compared with role peers (tensor and pipeline groups), for which the diagnosis measures no KS: each
//    rank's time outside collectives per step (DrawnFacts::busy_ns), at least 2 steps, scored among the ranks
//    of its stage (all ranks when stages are unknown), the peers the grouped comparison uses.
// The matrix's groups follow the ranks' stages either way (DrawnFacts::stages).
// Invariant: reads the model, the result and the facts, changes none of them.
#pragma once

#include <optional>

#include "analysis/diagnosis/drawn_facts.h"
#include "analysis/diagnosis/result.h"
#include "model/job_model.h"

namespace strata::diagnosis {

/// The divergence above of the `ranks` ranks of a trace (`facts`' busy_ns and stages filled); none when fewer
/// than 2 ranks have samples, or the ranks were not compared.
std::optional<KsDivergence> TraceKs(const model::JobModel& job, const DiagnosisResult& result, const DrawnFacts& facts,
                                    size_t ranks);

}  // namespace strata::diagnosis
