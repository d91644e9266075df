// JsonEventSplitter implementation: a byte-level structure scanner over a sliding window.
#include "importers/json_event_splitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

// The 64-byte block scanner uses AVX2 and PCLMUL. The binary is built for x86-64-v2 by default, so those
// functions are compiled for AVX2 by target attribute and chosen at run time when the CPU has it (function
// level: nothing else of the file is compiled for AVX2, so no AVX2 code reaches a CPU without it).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define STRATA_SPLITTER_SIMD 1
#define STRATA_AVX2 __attribute__((target("avx2,pclmul")))
#endif

namespace strata {

namespace {
constexpr size_t kReadChunk = 1 << 20;  // largest single read
// A file starts with a buffer this size and doubles it only when less than kMinRead is free after what must
// be kept: a job of 10,000 small rank files used to pay a 1 MiB zero-filled buffer and a 2 MiB regrowth each.
constexpr size_t kFirstBuffer = 64 << 10;
constexpr size_t kMinRead = 16 << 10;
// No single event or top-level value may span more than this: real events are under a megabyte, and
// element offsets within a batch are 32-bit. A larger one is an error, never an unbounded buffer.
constexpr size_t kMaxValueBytes = 256 << 20;
constexpr size_t kSlack = 64;  // readable bytes kept after end_ so 64-byte blocks never read out of bounds
// The first buffer: room for a whole plain file of up to kWholeFileBytes (so that reading it is one read and the
// read that finds its end, with no regrowth), else kFirstBuffer.
constexpr size_t kWholeFileBytes = 4 << 20;
size_t FirstBufferBytes(const ByteSource& src) {
  const uint64_t size = src.compressed() ? 0 : src.file_size();
  if (size == 0 || size > kWholeFileBytes) return kFirstBuffer + kSlack;
  return std::max<size_t>(kFirstBuffer, static_cast<size_t>(size) + kMinRead) + kSlack;
}
inline bool IsWs(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

#ifdef STRATA_SPLITTER_SIMD
// One 64-byte block classified into bit masks (bit i = byte i).
struct BlockMasks {
  uint64_t quote, backslash, open, close;
};

STRATA_AVX2 inline uint64_t Eq(__m256i lo, __m256i hi, char c) {
  const __m256i v = _mm256_set1_epi8(c);
  const auto a = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, v)));
  const auto b = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, v)));
  return a | (static_cast<uint64_t>(b) << 32);
}

STRATA_AVX2 inline BlockMasks Classify(const char* p, uint64_t valid) {
  const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
  return {Eq(lo, hi, '"') & valid, Eq(lo, hi, '\\') & valid, (Eq(lo, hi, '{') | Eq(lo, hi, '[')) & valid,
          (Eq(lo, hi, '}') | Eq(lo, hi, ']')) & valid};
}

// Bits of characters preceded by an odd run of backslashes (escaped), carrying across blocks
// (the escape-detection step of Langdale & Lemire, "Parsing Gigabytes of JSON per Second").
inline uint64_t Escaped(uint64_t backslash, uint64_t* prev_escaped) {
  backslash &= ~*prev_escaped;
  const uint64_t follows_escape = backslash << 1 | *prev_escaped;
  constexpr uint64_t kEven = 0x5555555555555555ULL;
  const uint64_t odd_starts = backslash & ~kEven & ~follows_escape;
  uint64_t even_starts;
  *prev_escaped = __builtin_add_overflow(odd_starts, backslash, &even_starts) ? 1 : 0;
  const uint64_t invert = even_starts << 1;
  return (kEven ^ invert) & follows_escape;
}

// Prefix XOR: bit i = xor of bits 0..i (marks bytes inside strings given quote positions).
STRATA_AVX2 inline uint64_t PrefixXor(uint64_t bits) {
  const __m128i v = _mm_set_epi64x(0, static_cast<int64_t>(bits));
  return static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_clmulepi64_si128(v, _mm_set1_epi8(-1), 0)));
}

bool CpuHasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul");
  return has;
}
#endif
}  // namespace

Status JsonEventSplitter::Fail(std::string_view what) const {
  return Status::BadInput(fmt::format("{}: invalid JSON at byte {}: {}", src_->path(), base_ + pos_, what),
                          ErrorPlace::AtOffset(src_->path(), base_ + pos_));
}

bool JsonEventSplitter::Refill() {
  if (eof_) return false;
  // Discard what nobody needs any more, then make room for one more chunk.
  if (keep_ > 0) {
    std::memmove(buf_.data(), buf_.data() + keep_, end_ - keep_);
    base_ += keep_;
    pos_ -= keep_;
    end_ -= keep_;
    keep_ = 0;
  }
  if (end_ > kMaxValueBytes) {
    read_error_ =
        Fail(fmt::format("one event or value spans more than {} MiB: not a trace event (the largest "
                         "real ones are under 1 MiB)",
                         kMaxValueBytes >> 20));
    eof_ = true;
    return false;
  }
  if (buf_.size() < end_ + kMinRead + kSlack) buf_.resize(std::max(buf_.size() * 2, end_ + kMinRead + kSlack));
  auto got = src_->Read(buf_.data() + end_, std::min(kReadChunk, buf_.size() - kSlack - end_));
  if (!got.ok()) {
    read_error_ = got.status();
    eof_ = true;
    return false;
  }
  if (got.value() == 0) {
    eof_ = true;
    return false;
  }
  end_ += got.value();
  return true;
}

void JsonEventSplitter::SkipWs() {
  for (;;) {
    while (pos_ < end_ && IsWs(buf_[pos_])) ++pos_;
    if (pos_ < end_ || !Refill()) return;
  }
}

bool JsonEventSplitter::SkipString() {
  for (;;) {
    const void* q = pos_ < end_ ? std::memchr(buf_.data() + pos_, '"', end_ - pos_) : nullptr;
    if (!q) {
      pos_ = end_;
      if (!Refill()) return false;
      continue;
    }
    size_t at = static_cast<const char*>(q) - buf_.data();
    size_t backslashes = 0;
    while (at > backslashes && buf_[at - 1 - backslashes] == '\\') ++backslashes;
    pos_ = at + 1;
    if ((backslashes & 1) == 0) return true;
  }
}

Status JsonEventSplitter::SkipContainer() {
#ifdef STRATA_SPLITTER_SIMD
  if (!scalar_ && CpuHasAvx2()) return SkipContainerAvx2();
#endif
  return SkipValue();
}

#ifdef STRATA_SPLITTER_SIMD
STRATA_AVX2 Status JsonEventSplitter::SkipContainerAvx2() {
  // pos_ is at '{' or '['. Walk 64-byte blocks, tracking strings with bit masks and nesting depth.
  int depth = 0;
  uint64_t prev_escaped = 0;
  uint64_t in_string_carry = 0;  // all ones when the previous block ended inside a string
  size_t p = pos_;
  for (;;) {
    if (p + 64 > end_ && !eof_) {
      pos_ = p;  // Refill may move the window; it shifts pos_ accordingly
      Refill();
      p = pos_;
      continue;
    }
    if (p >= end_) {
      pos_ = end_;
      return read_error_.ok() ? Fail("the document ends inside an object or array (truncated file?)") : read_error_;
    }
    const uint64_t valid = p + 64 <= end_ ? ~uint64_t{0} : ((uint64_t{1} << (end_ - p)) - 1);
    const BlockMasks m = Classify(buf_.data() + p, valid);
    const uint64_t quotes = m.quote & ~Escaped(m.backslash, &prev_escaped);
    const uint64_t in_string = PrefixXor(quotes) ^ in_string_carry;
    in_string_carry = static_cast<uint64_t>(static_cast<int64_t>(in_string) >> 63);
    const uint64_t open = m.open & ~in_string;
    const uint64_t close = m.close & ~in_string;
    for (uint64_t bits = open | close; bits != 0; bits &= bits - 1) {
      const int i = __builtin_ctzll(bits);
      if (open >> i & 1) {
        ++depth;
      } else if (--depth == 0) {
        pos_ = p + static_cast<size_t>(i) + 1;
        return Status::Ok();
      }
    }
    p += 64;
  }
}
#endif

Status JsonEventSplitter::SkipValue() {
  SkipWs();
  if (pos_ >= end_) return read_error_.ok() ? Fail("the document ends where a value was expected") : read_error_;
  const char first = buf_[pos_];
  if (first == '"') {
    ++pos_;
    if (!SkipString()) return read_error_.ok() ? Fail("the document ends inside a string") : read_error_;
    return Status::Ok();
  }
  if (first != '{' && first != '[') {
    // number, true, false, null: up to the next delimiter
    for (;;) {
      while (pos_ < end_) {
        const char c = buf_[pos_];
        if (c == ',' || c == '}' || c == ']' || IsWs(c)) return Status::Ok();
        if (c == '"' || c == '{' || c == '[') return Fail("unexpected character inside a scalar value");
        ++pos_;
      }
      if (!Refill()) return read_error_.ok() ? Status::Ok() : read_error_;
    }
  }
  int depth = 0;
  for (;;) {
    while (pos_ < end_) {
      const char c = buf_[pos_++];
      if (c == '"') {
        if (!SkipString()) return read_error_.ok() ? Fail("the document ends inside a string") : read_error_;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) return Status::Ok();
      }
    }
    if (!Refill()) {
      return read_error_.ok() ? Fail("the document ends inside an object or array (truncated file?)") : read_error_;
    }
  }
}

Status JsonEventSplitter::FlushBatch(const BatchFn& on_batch, size_t end) {
  if (batch_.elements.empty()) return Status::Ok();
  batch_.body = std::string_view(buf_.data() + keep_, end - keep_);
  batch_.file_offset = base_ + keep_;
  Status st = on_batch(batch_);
  batch_.elements.clear();
  return st;
}

Status JsonEventSplitter::ReadEvents(const BatchFn& on_batch) {
  found_events_ = true;
  ++pos_;  // '['
  SkipWs();
  keep_ = pos_;
  if (pos_ < end_ && buf_[pos_] == ']') {
    ++pos_;
    return Status::Ok();
  }
  for (;;) {
    SkipWs();
    // Refill may move the window, so positions are kept relative to keep_ (the batch start).
    const size_t start = pos_ - keep_;
    const bool container = pos_ < end_ && (buf_[pos_] == '{' || buf_[pos_] == '[');
    if (Status st = container ? SkipContainer() : SkipValue(); !st.ok()) return st;
    batch_.elements.emplace_back(static_cast<uint32_t>(start), static_cast<uint32_t>(pos_ - keep_ - start));
    const size_t element_end = pos_ - keep_;  // relative, like start
    SkipWs();
    if (pos_ >= end_) return read_error_.ok() ? Fail("the event array is not closed (truncated file?)") : read_error_;
    const char c = buf_[pos_];
    if (c != ',' && c != ']') return Fail(fmt::format("expected ',' or ']' after an event, found '{}'", c));
    if (c == ']' || element_end >= batch_bytes_) {
      if (Status st = FlushBatch(on_batch, keep_ + element_end); !st.ok()) return st;
      ++pos_;
      if (c == ']') {
        keep_ = pos_;
        return Status::Ok();
      }
      SkipWs();
      keep_ = pos_;
      continue;
    }
    ++pos_;
  }
}

Status JsonEventSplitter::Run(ByteSource& src, const MemberFn& on_member, const BatchFn& on_batch) {
  src_ = &src;
  buf_.resize(FirstBufferBytes(src));
  pos_ = end_ = keep_ = 0;
  base_ = 0;
  Refill();
  // Skip a UTF-8 byte order mark.
  if (end_ >= 3 && std::memcmp(buf_.data(), "\xEF\xBB\xBF", 3) == 0) pos_ = 3;
  SkipWs();
  if (pos_ >= end_) return read_error_.ok() ? Fail("the file is empty") : read_error_;
  if (buf_[pos_] == '[') {
    shape_ = Shape::kBareArray;
    if (Status st = ReadEvents(on_batch); !st.ok()) return st;
  } else if (buf_[pos_] == '{') {
    shape_ = Shape::kObject;
    ++pos_;
    SkipWs();
    if (pos_ < end_ && buf_[pos_] == '}') {
      ++pos_;
    } else {
      for (;;) {
        SkipWs();
        keep_ = pos_;
        if (pos_ >= end_ || buf_[pos_] != '"') return Fail("expected a member name in the top-level object");
        ++pos_;
        if (!SkipString()) return read_error_.ok() ? Fail("the document ends inside a member name") : read_error_;
        // The name starts just after keep_ (its opening quote): Refill, inside SkipString, moves the window
        // and keep_ with it, so a position taken before it would be stale when the name crosses a read.
        const size_t key_start = keep_ + 1;
        const std::string key(buf_.data() + key_start, pos_ - 1 - key_start);
        SkipWs();
        if (pos_ >= end_ || buf_[pos_] != ':') return Fail("expected ':' after a member name");
        ++pos_;
        SkipWs();
        if (key == "traceEvents" && pos_ < end_ && buf_[pos_] == '[') {
          if (Status st = ReadEvents(on_batch); !st.ok()) return st;
        } else {
          keep_ = pos_;  // the value stays in the window while it is scanned
          if (Status st = SkipValue(); !st.ok()) return st;
          on_member(key, std::string_view(buf_.data() + keep_, pos_ - keep_));
        }
        SkipWs();
        if (pos_ >= end_)
          return read_error_.ok() ? Fail("the top-level object is not closed (truncated file?)") : read_error_;
        if (buf_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (buf_[pos_] == '}') {
          ++pos_;
          break;
        }
        return Fail(fmt::format("expected ',' or '}}' in the top-level object, found '{}'", buf_[pos_]));
      }
    }
  } else {
    return Fail("a Chrome/Kineto trace must start with '{' or '['");
  }
  keep_ = pos_;
  SkipWs();
  if (pos_ < end_) return Fail("unexpected data after the end of the JSON document");
  return read_error_;
}

}  // namespace strata
