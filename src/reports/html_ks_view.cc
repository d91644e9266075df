// The HTML report's KAIR panel as the view carries it (see html_ks_view.h).
#include "reports/html_ks_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace strata {

namespace {

using Json = nlohmann::ordered_json;

double Rounded(double d) { return std::round(d * 1e4) / 1e4; }

/// "rank 5" for one rank; "r176–179", or "r176–177,184–185" when the ranks are not consecutive.
std::string GroupLabel(std::vector<int32_t> numbers) {
  if (numbers.size() == 1) return fmt::format("rank {}", numbers.front());
  std::sort(numbers.begin(), numbers.end());
  std::vector<std::string> runs;
  for (size_t i = 0; i < numbers.size();) {
    size_t j = i;
    while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
    runs.push_back(i == j ? std::to_string(numbers[i]) : fmt::format("{}–{}", numbers[i], numbers[j]));
    i = j + 1;
  }
  return fmt::format("r{}", fmt::join(runs, ","));
}

const char* SampleWords(diagnosis::KsSample of) {
  switch (of) {
    case diagnosis::KsSample::kComputeOpDurations:
      return "compute op durations";
    case diagnosis::KsSample::kOwnWorkPhases:
      return "own-work phases (between and after its collective calls; the samples the diagnosis scores)";
    case diagnosis::KsSample::kStepBusy:
      return "per-step time outside collectives";
  }
  return "";
}

}  // namespace

Json KsView(const TraceStore& store, const std::optional<diagnosis::KsDivergence>& ks) {
  if (!ks) return nullptr;
  const auto number = [&](size_t r) { return store.ranks[r].rank; };
  Json labels = Json::array(), groups = Json::array(), lead = Json::array(), matrix = Json::array(),
       score = Json::array();
  for (size_t g = 0; g < ks->groups.size(); ++g) {
    std::vector<int32_t> numbers;
    for (const size_t r : ks->groups[g]) numbers.push_back(number(r));
    labels.push_back(GroupLabel(numbers));
    groups.push_back(std::move(numbers));
    lead.push_back(number(ks->lead[g]));
  }
  for (const std::vector<double>& from : ks->matrix) {
    Json row = Json::array();
    for (const double d : from) row.push_back(Rounded(d));
    matrix.push_back(std::move(row));
  }
  for (const double s : ks->score) score.push_back(Rounded(s));
  Json out;
  out["of"] = SampleWords(ks->of);
  out["peers"] = ks->peers == diagnosis::KsPeers::kStagePeers ? "the other ranks of its stage" : "the other ranks";
  out["pooled"] = ks->pooled;
  out["labels"] = std::move(labels);
  out["groups"] = std::move(groups);
  out["matrix"] = std::move(matrix);
  out["score"] = std::move(score);
  out["lead"] = std::move(lead);
  out["ranking"] = ks->ranking;
  return out;
}

}  // namespace strata
