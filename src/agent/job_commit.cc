// JobCommit (see job_commit.h).
#include "agent/job_commit.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace strata::agent {
namespace {

template <typename T>
bool ParseInt(const std::string& text, T* out) {
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && p == end && !text.empty();
}

}  // namespace

std::string JudgedKey(const std::string& job) { return "strata:job:{" + job + "}:judged"; }

std::vector<std::string> EncodeCommit(const JobCommit& c) {
  std::vector<std::string> words = {
      "owner",       c.owner,       "steps_judged",     std::to_string(c.steps_judged),
      "resume_from", c.resume_from, "summaries_judged", std::to_string(c.summaries_judged)};
  if (c.judged_start > 0) {
    words.push_back("judged_start");
    words.push_back(fmt::format("{:.6f}", c.judged_start));
  }
  if (c.job_step >= 0) {
    words.push_back("job_step");
    words.push_back(std::to_string(c.job_step));
  }
  for (const auto& [rank, step] : c.judged_own) {
    words.push_back("rank:" + std::to_string(rank));
    words.push_back(std::to_string(step));
  }
  for (const auto& [rank, offset] : c.offset) {
    words.push_back("offset:" + std::to_string(rank));
    words.push_back(std::to_string(offset));
  }
  return words;
}

Expected<JobCommit> DecodeCommit(const RedisReply& hgetall, bool* found) {
  JobCommit c;
  *found = hgetall.kind == RedisReply::Kind::kArray && !hgetall.elements.empty();
  if (!*found) return c;
  const auto& e = hgetall.elements;
  for (size_t i = 0; i + 1 < e.size(); i += 2) {
    const std::string& field = e[i].text;
    const std::string& value = e[i + 1].text;
    bool ok = true;
    if (field == "owner") {
      c.owner = value;
    } else if (field == "steps_judged") {
      ok = ParseInt(value, &c.steps_judged);
    } else if (field == "summaries_judged") {
      ok = ParseInt(value, &c.summaries_judged);
    } else if (field == "resume_from") {
      ok = !value.empty();
      c.resume_from = value;
    } else if (field == "judged_start") {
      char* end = nullptr;
      c.judged_start = std::strtod(value.c_str(), &end);
      ok = !value.empty() && end == value.c_str() + value.size() && std::isfinite(c.judged_start);
    } else if (field == "job_step") {
      ok = ParseInt(value, &c.job_step) && c.job_step >= 0;
    } else if (field.rfind("rank:", 0) == 0) {
      int32_t rank = 0;
      int64_t step = 0;
      ok = ParseInt(field.substr(5), &rank) && ParseInt(value, &step);
      c.judged_own[rank] = step;
    } else if (field.rfind("offset:", 0) == 0) {
      int32_t rank = 0;
      int64_t offset = 0;
      ok = ParseInt(field.substr(7), &rank) && ParseInt(value, &offset);
      c.offset[rank] = offset;
    }
    if (!ok) return Status::BadInput("judged record field '" + field + "': malformed value");
  }
  return c;
}

std::pair<uint64_t, uint64_t> StreamIdOrder(const std::string& id) {
  const size_t dash = id.find('-');
  uint64_t ms = 0, seq = 0;
  if (dash == std::string::npos || !ParseInt(id.substr(0, dash), &ms) || !ParseInt(id.substr(dash + 1), &seq))
    return {0, 0};
  return {ms, seq};
}

}  // namespace strata::agent
