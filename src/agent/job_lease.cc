// JobLeases (see job_lease.h).
#include "agent/job_lease.h"

#include <algorithm>

namespace strata::agent {
namespace {

// KEYS[1] the lease, KEYS[2] the judged record; ARGV[1] this serve, ARGV[2] the lease in ms, then the
// record's field/value pairs (none: a renewal alone). 1 when renewed (and written), 0 when not this serve's.
constexpr const char* kRenewScript = R"(if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
return 1)";

// KEYS[1] the lease; ARGV[1] this serve: deletes the lease only when it is still this serve's.
constexpr const char* kReleaseScript = R"(if redis.call('GET', KEYS[1]) == ARGV[1] then
return redis.call('DEL', KEYS[1]) end return 0)";

}  // namespace

std::string LeaseKey(const std::string& job) { return "strata:job:{" + job + "}:lease"; }

// Each job's owner into owners_; `read` gets the jobs whose owner was read (not those on a node down).
Status JobLeases::ReadOwners(RedisConnection* conn, const std::vector<std::string>& jobs,
                             std::vector<std::string>* read) {
  std::vector<std::vector<std::string>> gets;
  for (const std::string& job : jobs) gets.push_back({"GET", LeaseKey(job)});
  if (gets.empty()) return Status::Ok();
  auto replies = conn->Pipeline(gets);
  if (!replies.ok()) return replies.status();
  for (size_t i = 0; i < jobs.size(); ++i) {
    const RedisReply& r = replies.value()[i];
    if (NodeDown(r)) {
      unreachable_.Note(r.text);
      continue;
    }
    if (r.kind == RedisReply::Kind::kError) return Status::Resource(LeaseKey(jobs[i]) + ": GET: " + r.text);
    owners_[jobs[i]] = r.kind == RedisReply::Kind::kString ? r.text : "";
    read->push_back(jobs[i]);
  }
  return Status::Ok();
}

// Takes a free lease (SET NX PX) or one held under this serve's name by an earlier process (the renewal).
Expected<bool> JobLeases::Take(RedisConnection* conn, const std::string& job, const std::string& owner) {
  const auto started = Clock::now();
  const std::string ms = std::to_string(static_cast<long long>(options_.lease_s * 1000));
  Expected<RedisReply> r =
      owner.empty() ? conn->Command({"SET", LeaseKey(job), options_.owner, "NX", "PX", ms})
                    : conn->Command({"EVAL", kRenewScript, "2", LeaseKey(job), JudgedKey(job), options_.owner, ms});
  if (!r.ok()) return r.status();
  const bool took = owner.empty() ? r.value().kind == RedisReply::Kind::kString : r.value().integer == 1;
  if (took) held_[job] = started;
  return took;
}

Expected<JobLeases::Taken> JobLeases::ReadRecord(RedisConnection* conn, const std::string& job) {
  auto r = conn->Command({"HGETALL", JudgedKey(job)});
  if (!r.ok()) return r.status();
  Taken t;
  t.job = job;
  auto commit = DecodeCommit(r.value(), &t.had_record);
  if (!commit.ok()) return commit.status().Reworded(JudgedKey(job) + ": " + commit.error());
  t.commit = std::move(commit).value();
  return t;
}

Expected<std::vector<JobLeases::Taken>> JobLeases::Refresh(RedisConnection* conn,
                                                           const std::vector<std::string>& jobs) {
  const auto now = Clock::now();
  const bool new_job = std::any_of(jobs.begin(), jobs.end(), [&](const auto& j) { return !owners_.count(j); });
  std::vector<Taken> taken;
  if (!new_job && now - checked_ < std::chrono::duration<double>(options_.lease_s / 4)) return taken;
  checked_ = now;
  std::vector<std::string> read;
  if (Status st = ReadOwners(conn, jobs, &read); !st.ok()) return st;
  for (const std::string& job : read) {
    const std::string& owner = owners_[job];
    if (held_.count(job)) {
      if (owner != options_.owner) {  // expired here and taken by another serve
        held_.erase(job);
        ++lost_;
      }
      continue;
    }
    if (!owner.empty() && owner != options_.owner) continue;
    auto took = Take(conn, job, owner);
    if (!took.ok() && NodeDown(took.status())) {
      unreachable_.Note(took.error());
      continue;
    }
    if (!took.ok()) return took.status();
    if (!took.value()) continue;  // another serve was quicker
    owners_[job] = options_.owner;
    auto record = ReadRecord(conn, job);
    if (!record.ok()) return record.status();
    ++taken_;
    taken.push_back(std::move(record).value());
  }
  return taken;
}

Expected<bool> JobLeases::Commit(RedisConnection* conn, const std::string& job, const JobCommit& c) {
  const auto started = Clock::now();
  std::vector<std::string> argv = {"EVAL",
                                   kRenewScript,
                                   "2",
                                   LeaseKey(job),
                                   JudgedKey(job),
                                   options_.owner,
                                   std::to_string(static_cast<long long>(options_.lease_s * 1000))};
  for (std::string& w : EncodeCommit(c)) argv.push_back(std::move(w));
  auto r = conn->Command(argv);
  if (!r.ok()) return r.status();
  if (r.value().integer == 1) {
    held_[job] = started;
    return true;
  }
  held_.erase(job);
  owners_.erase(job);  // read again at the next refresh
  ++lost_;
  return false;
}

Status JobLeases::ReleaseAll(RedisConnection* conn) {
  std::vector<std::vector<std::string>> commands;
  for (const auto& [job, renewed] : held_)
    commands.push_back({"EVAL", kReleaseScript, "1", LeaseKey(job), options_.owner});
  held_.clear();
  if (commands.empty()) return Status::Ok();
  auto r = conn->Pipeline(commands);
  return r.ok() ? Status::Ok() : r.status();
}

bool JobLeases::Mine(const std::string& job) const {
  auto it = held_.find(job);
  return it != held_.end() && Clock::now() - it->second < std::chrono::duration<double>(SafeS());
}

bool JobLeases::RenewDue(const std::string& job) const {
  auto it = held_.find(job);
  return it == held_.end() || Clock::now() - it->second >= std::chrono::duration<double>(options_.lease_s / 4);
}

std::vector<std::string> JobLeases::Expire() {
  std::vector<std::string> gone;
  for (auto it = held_.begin(); it != held_.end();)
    if (Clock::now() - it->second >= std::chrono::duration<double>(SafeS())) {
      gone.push_back(it->first);
      owners_.erase(it->first);
      it = held_.erase(it);
      ++lost_;
    } else {
      ++it;
    }
  return gone;
}

}  // namespace strata::agent
