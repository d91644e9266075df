// Hash slots and command keys of Redis Cluster (see redis_slots.h).
#include "agent/redis_slots.h"

#include <algorithm>
#include <cctype>

namespace strata::agent {
namespace {

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

}  // namespace

uint16_t Crc16Xmodem(std::string_view bytes) {
  uint16_t crc = 0;
  for (const char c : bytes) {
    crc = static_cast<uint16_t>(crc ^ (static_cast<uint16_t>(static_cast<unsigned char>(c)) << 8));
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc & 0x8000) != 0 ? static_cast<uint16_t>((crc << 1) ^ 0x1021) : static_cast<uint16_t>(crc << 1);
  }
  return crc;
}

int KeySlot(std::string_view key) {
  const size_t open = key.find('{');
  if (open != std::string_view::npos) {
    const size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) key = key.substr(open + 1, close - open - 1);
  }
  return Crc16Xmodem(key) % kRedisSlots;
}

std::optional<std::string> CommandKey(const std::vector<std::string>& argv) {
  if (argv.size() < 2) return std::nullopt;
  const std::string name = Upper(argv[0]);
  if (name == "PING" || name == "AUTH" || name == "ASKING" || name == "CLUSTER" || name == "INFO" || name == "HELLO" ||
      name == "SELECT" || name == "WAIT")
    return std::nullopt;
  if (name == "XGROUP" || name == "XINFO") return argv.size() > 2 ? std::optional(argv[2]) : std::nullopt;
  if (name == "EVAL" || name == "EVALSHA")  // EVAL SCRIPT NUMKEYS KEY...: its first key, none when NUMKEYS is 0
    return argv.size() > 3 && argv[2] != "0" ? std::optional(argv[3]) : std::nullopt;
  if (name == "XREAD" || name == "XREADGROUP") {
    for (size_t i = 1; i + 1 < argv.size(); ++i)
      if (Upper(argv[i]) == "STREAMS") return argv[i + 1];
    return std::nullopt;
  }
  return argv[1];
}

}  // namespace strata::agent
