// Layout and process groups of a synthetic job (see layout.h).
#include "synth/layout.h"

#include <fmt/format.h>

namespace strata::synth {

int64_t Layout::GroupId(GroupKind kind, const Coord& c) const {
  // Ids start at 1 ("0" is the default group of every PyTorch job, which the synthetic job does not use
  // for its collectives).
  switch (kind) {
    case GroupKind::kTensor:
      return 1 + c.dp * pp_ + c.stage;
    case GroupKind::kData:
      return 1 + dp_ * pp_ + c.stage * tp_ + c.tp;
    case GroupKind::kPipePair:
      return 1 + dp_ * pp_ + pp_ * tp_ + (c.dp * pp_ + c.stage) * tp_ + c.tp;
  }
  return 0;
}

std::vector<int64_t> Layout::Members(GroupKind kind, const Coord& c) const {
  std::vector<int64_t> out;
  switch (kind) {
    case GroupKind::kTensor:
      for (int64_t t = 0; t < tp_; ++t) out.push_back(RankOf({c.dp, c.stage, t}));
      break;
    case GroupKind::kData:
      for (int64_t d = 0; d < dp_; ++d) out.push_back(RankOf({d, c.stage, c.tp}));
      break;
    case GroupKind::kPipePair:
      out.push_back(RankOf({c.dp, c.stage, c.tp}));
      out.push_back(RankOf({c.dp, c.stage + 1, c.tp}));
      break;
  }
  return out;
}

Status ResolveLayout(int64_t ranks, int64_t dp, int64_t pp, int64_t tp, Layout* out) {
  if (ranks < 2 || ranks > 100000) return Status::Usage(fmt::format("--ranks {}: must be between 2 and 100000", ranks));
  if (dp < 0 || pp < 0 || tp < 0) return Status::Usage("--dp/--pp/--tp: must be positive");
  if (pp == 0) pp = 1;
  if (tp == 0) tp = 1;
  if (ranks % (pp * tp) != 0)
    return Status::Usage(fmt::format("--pp {} x --tp {} = {} does not divide --ranks {}", pp, tp, pp * tp, ranks));
  if (dp == 0) dp = ranks / (pp * tp);
  if (dp * pp * tp != ranks)
    return Status::Usage(
        fmt::format("--dp {} x --pp {} x --tp {} = {} does not match --ranks {}", dp, pp, tp, dp * pp * tp, ranks));
  *out = Layout(dp, pp, tp);
  return Status::Ok();
}

}  // namespace strata::synth
