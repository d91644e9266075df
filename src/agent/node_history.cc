// NodeHistory (see node_history.h).
#include "agent/node_history.h"

#include <algorithm>

#include "analysis/diagnosis/thresholds.h"

namespace strata::agent {

namespace th = diagnosis::thresholds;

std::pair<size_t, size_t> NodeRecord::RecentJobs(size_t recent) const {
  const size_t n = std::min(recent, jobs.size());
  const size_t named = static_cast<size_t>(std::count_if(jobs.end() - static_cast<std::ptrdiff_t>(n), jobs.end(),
                                                         [](const NodeJob& j) { return !j.named.empty(); }));
  return {n, named};
}

bool NodeRecord::Suspect() const {
  const auto [n, named] = RecentJobs(th::kSuspectNodeRecentJobs);
  return n >= th::kSuspectNodeMinJobs &&
         static_cast<double>(named) >= th::kSuspectNodeMinShare * static_cast<double>(n);
}

nlohmann::json NodeRecord::ToJson() const {
  nlohmann::json list = nlohmann::json::array();
  for (const NodeJob& j : jobs) {
    nlohmann::json named = nlohmann::json::array();
    for (const auto& [rank, cause] : j.named) named.push_back({{"rank", rank}, {"cause", cause}});
    list.push_back({{"job", j.job}, {"first_seen", j.first_seen}, {"named", named}});
  }
  return {{"host", host}, {"jobs", list}};
}

Expected<NodeRecord> NodeRecord::FromJson(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("host") || !j["host"].is_string() || !j.contains("jobs") || !j["jobs"].is_array())
    return Status::BadInput("a node record needs a string `host` and an array `jobs`");
  NodeRecord r;
  r.host = j["host"].get<std::string>();
  for (const nlohmann::json& job : j["jobs"]) {
    if (!job.is_object() || !job.contains("job") || !job["job"].is_string())
      return Status::BadInput("node " + r.host + ": a job without a string `job`");
    NodeJob nj{job["job"].get<std::string>(), job.value("first_seen", 0.0), {}};
    if (job.contains("named") && job["named"].is_array())
      for (const nlohmann::json& n : job["named"])
        if (n.is_object() && n.contains("rank") && n["rank"].is_number_integer())
          nj.named.emplace_back(n["rank"].get<int32_t>(), n.value("cause", std::string("unknown")));
    r.jobs.push_back(std::move(nj));
  }
  while (r.jobs.size() > th::kNodeHistoryJobs) r.jobs.pop_front();
  return r;
}

bool NodeHistory::SeeRank(const std::string& host, const std::string& job, int32_t rank, double now_unix) {
  if (host.empty()) return false;
  host_of_[{job, rank}] = host;
  NodeRecord& node = nodes_[host];
  node.host = host;
  if (std::any_of(node.jobs.begin(), node.jobs.end(), [&](const NodeJob& j) { return j.job == job; })) return false;
  node.jobs.push_back({job, now_unix, {}});
  while (node.jobs.size() > th::kNodeHistoryJobs) node.jobs.pop_front();
  return true;
}

std::string NodeHistory::Named(const std::string& job, int32_t rank, const std::string& cause) {
  auto where = host_of_.find({job, rank});
  if (where == host_of_.end()) return "";
  NodeRecord& node = nodes_[where->second];
  auto it = std::find_if(node.jobs.begin(), node.jobs.end(), [&](const NodeJob& j) { return j.job == job; });
  if (it == node.jobs.end()) return "";  // the job was forgotten (bounded history)
  const std::pair<int32_t, std::string> naming{rank, cause};
  if (std::find(it->named.begin(), it->named.end(), naming) != it->named.end()) return "";
  it->named.push_back(naming);
  return node.host;
}

void NodeHistory::Restore(NodeRecord record) {
  const std::string host = record.host;
  nodes_[host] = std::move(record);
}

}  // namespace strata::agent
