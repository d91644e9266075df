// StringPool implementation: open-addressing hash table over an append-only arena.
#include "core/string_pool.h"

#include <algorithm>
#include <cstring>

namespace strata {

namespace {
// Arena blocks start small and double up to kBlockBytes: a pool per trace file holds a few KiB of names, and
// one 64 KiB block per file (100,000 files) cost more in allocation and page faults than the parse.
constexpr size_t kFirstBlockBytes = 4 * 1024;
constexpr size_t kBlockBytes = 64 * 1024;
// Hash slots to start with (a power of two; doubled as the pool fills): a trace file names a few dozen strings,
// and 1,024 zeroed slots per file were 400 MB of memset and page faults over 100,000 files.
constexpr size_t kFirstSlots = 64;
}  // namespace

StringPool::StringPool() : slots_(kFirstSlots, 0) {
  strings_.emplace_back();
  hashes_.push_back(hash({}));
  slots_[hashes_[0] & (slots_.size() - 1)] = 1;
}

namespace {

// The last `rem` (0..7) bytes at p as a little-endian word, upper bytes zero: what a memcpy of them into a
// zeroed uint64_t gives. A variable-length memcpy into a stack word and the 8-byte load after it stalled on
// store forwarding (perf: a quarter of intern's time); these are whole loads. `before` bytes ahead of p
// belong to the same string (an overlapping 8-byte load needs 8 bytes in all).
uint64_t TailWord(const char* p, size_t rem, size_t before) {
  if (rem == 0) return 0;  // p may be null when the string is empty
  uint64_t w;
  if (before + rem >= 8) {
    std::memcpy(&w, p + rem - 8, 8);
    return w >> (8 * (8 - rem));
  }
  if (rem >= 4) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + rem - 4, 4);
    return lo | (static_cast<uint64_t>(hi) << (8 * (rem - 4)));
  }
  const auto byte = [p](size_t k) { return static_cast<uint64_t>(static_cast<unsigned char>(p[k])); };
  return byte(0) | (byte(rem / 2) << (8 * (rem / 2))) | (byte(rem - 1) << (8 * (rem - 1)));
}

}  // namespace

uint64_t StringPool::hash(std::string_view s) {
  // FNV-1a over 8-byte words, then a final avalanche (splitmix64). Fast for the short names in traces.
  uint64_t h = 0xcbf29ce484222325ULL ^ s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0x100000001b3ULL;
    h ^= h >> 29;
  }
  const uint64_t tail = TailWord(s.data() + i, s.size() - i, i);
  h = (h ^ tail) * 0x100000001b3ULL;
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  h ^= h >> 31;
  return h;
}

std::string_view StringPool::store(std::string_view s) {
  if (s.empty()) return {};
  if (s.size() > kBlockBytes / 4) {  // large strings get their own block
    blocks_.emplace_back(new char[s.size()]);
    std::memcpy(blocks_.back().get(), s.data(), s.size());
    arena_bytes_ += s.size();
    return {blocks_.back().get(), s.size()};
  }
  if (blocks_.empty() || block_used_ + s.size() > block_size_) {
    size_t size = blocks_.empty() ? kFirstBlockBytes : std::min(kBlockBytes, 2 * block_size_);
    while (size < s.size()) size *= 2;  // s is at most kBlockBytes / 4 here
    blocks_.emplace_back(new char[size]);
    block_used_ = 0;
    block_size_ = size;
    arena_bytes_ += size;
  }
  char* dst = blocks_.back().get() + block_used_;
  std::memcpy(dst, s.data(), s.size());
  block_used_ += s.size();
  return {dst, s.size()};
}

void StringPool::grow() {
  std::vector<uint32_t> slots(slots_.size() * 2, 0);
  const size_t mask = slots.size() - 1;
  for (uint32_t id = 0; id < strings_.size(); ++id) {
    size_t pos = hashes_[id] & mask;
    while (slots[pos] != 0) pos = (pos + 1) & mask;
    slots[pos] = id + 1;
  }
  slots_.swap(slots);
}

StringId StringPool::find(std::string_view s) const {
  const uint64_t h = hash(s);
  const size_t mask = slots_.size() - 1;
  for (size_t pos = h & mask;; pos = (pos + 1) & mask) {
    const uint32_t slot = slots_[pos];
    if (slot == 0) return kNotFound;
    if (hashes_[slot - 1] == h && strings_[slot - 1] == s) return StringId(slot - 1);
  }
}

StringId StringPool::intern(std::string_view s) {
  const uint64_t h = hash(s);
  size_t mask = slots_.size() - 1;
  size_t pos = h & mask;
  for (;; pos = (pos + 1) & mask) {
    const uint32_t slot = slots_[pos];
    if (slot == 0) break;
    if (hashes_[slot - 1] == h && strings_[slot - 1] == s) return StringId(slot - 1);
  }
  const auto id = static_cast<uint32_t>(strings_.size());
  strings_.push_back(store(s));
  hashes_.push_back(h);
  slots_[pos] = id + 1;
  if (strings_.size() * 2 > slots_.size()) grow();
  return StringId(id);
}

size_t StringPool::memory_bytes() const {
  return arena_bytes_ + strings_.capacity() * sizeof(std::string_view) + hashes_.capacity() * sizeof(uint64_t) +
         slots_.capacity() * sizeof(uint32_t);
}

}  // namespace strata
