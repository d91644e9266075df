// Redis Cluster key routing, from the cluster specification: a key's hash slot is CRC16 (XMODEM: polynomial
// 0x1021, initial value 0, no reflection) of the key mod 16384, or of its hash tag, the text between the first
// '{' and the next '}', when that text is not empty. CommandKey names the key a command is routed by.
// Invariants: KeySlot is always in [0, kRedisSlots); a command without a key (PING, AUTH, CLUSTER, WAIT ...) has
// no slot and may go to any node.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::agent {

constexpr int kRedisSlots = 16384;

/// CRC16-XMODEM of `bytes` (CRC16 of "123456789" is 0x31C3).
uint16_t Crc16Xmodem(std::string_view bytes);
/// The hash slot of `key` (its hash tag's when it has a non-empty one).
int KeySlot(std::string_view key);
/// The key a command is routed by: the first key of the commands strata sends (argv[1] for most;
/// XGROUP's third word; EVAL's first key (argv[3]); the first stream after STREAMS of XREAD/XREADGROUP); none for
/// keyless commands.
std::optional<std::string> CommandKey(const std::vector<std::string>& argv);

}  // namespace strata::agent
