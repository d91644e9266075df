// Rank inference rules (see rank_inference.h).
#include "importers/rank_inference.h"

#include <fmt/format.h>

#include <cctype>

#include "core/decimal.h"

namespace strata {

namespace {
std::string_view PathBaseName(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}
}  // namespace

std::optional<int> RankFromFileName(std::string_view path) {
  std::string name(PathBaseName(path));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view word : {"rank", "worker"}) {
    size_t at = 0;
    while ((at = name.find(word, at)) != std::string::npos) {
      const bool word_start = at == 0 || !std::isalpha(static_cast<unsigned char>(name[at - 1]));
      size_t i = at + word.size();
      if (i < name.size() && (name[i] == '-' || name[i] == '_' || name[i] == '.')) ++i;
      size_t j = i;
      while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j])) && j - i < 9) ++j;
      if (word_start && j > i) return std::stoi(name.substr(i, j - i));
      at += word.size();
    }
  }
  return std::nullopt;
}

std::optional<int> RankFromTrailingNumber(std::string_view path) {
  std::string_view stem = PathBaseName(path);
  stem = stem.substr(0, stem.find('.', 1));  // before the first extension (a leading dot is no extension)
  size_t i = stem.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(stem[i - 1]))) --i;
  if (i == stem.size() || stem.size() - i > 9) return std::nullopt;
  return std::stoi(std::string(stem.substr(i)));
}

std::optional<int64_t> PidFromTensorboardName(std::string_view path) {
  std::string_view name = PathBaseName(path);
  const size_t suffix = name.rfind(".pt.trace.json");
  if (suffix == std::string_view::npos) return std::nullopt;
  name = name.substr(0, suffix);  // HOST_PID.TIMESTAMP
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  int64_t timestamp;
  if (ParseInt64(name.substr(dot + 1), &timestamp) != NumberParse::kOk) return std::nullopt;
  const std::string_view host_pid = name.substr(0, dot);
  const size_t underscore = host_pid.rfind('_');
  if (underscore == std::string_view::npos || underscore == 0) return std::nullopt;
  int64_t pid;
  if (ParseInt64(host_pid.substr(underscore + 1), &pid) != NumberParse::kOk || pid <= 0) return std::nullopt;
  return pid;
}

Status ParseRankMap(std::string_view spec, std::map<std::string, int>* out) {
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    if (comma == std::string_view::npos) comma = spec.size();
    const std::string_view item = spec.substr(start, comma - start);
    if (!item.empty()) {
      const size_t eq = item.rfind('=');
      int64_t rank = -1;
      if (eq == std::string_view::npos || eq == 0 || ParseInt64(item.substr(eq + 1), &rank) != NumberParse::kOk ||
          rank < 0 || rank > 1'000'000'000) {
        return Status::Usage(fmt::format("--rank-map: '{}' is not FILE=RANK with a rank >= 0", item));
      }
      (*out)[std::string(item.substr(0, eq))] = static_cast<int>(rank);
    }
    start = comma + 1;
  }
  return Status::Ok();
}

std::optional<int> LookupRankMap(const std::map<std::string, int>& map, const std::string& path) {
  if (auto it = map.find(path); it != map.end()) return it->second;
  if (auto it = map.find(std::string(PathBaseName(path))); it != map.end()) return it->second;
  return std::nullopt;
}

}  // namespace strata
