// libFuzzer target for the decoded records of a segment, past the checksums: the input is a segment file
// whose block payloads are stored uncompressed (header fields raw_size, compressed_size and crc32 are
// ignored); the harness compresses each payload, fills in sizes and checksum, and reads the result as
// fuzz_segment does. Mutations thus reach the table decoders and the meta JSON (nesting, sizes, ids) that
// a checksum would otherwise shield. Seeds: corpus/segment_records/ (tests/fuzz/make_records_corpus.py).
#include <zlib.h>
#include <zstd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "segment_check.h"
#include "segments/segment_format.h"

namespace {

using strata::segments::kBlockHeaderSize;
using strata::segments::kFileHeaderSize;

uint32_t Load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

void Store32(std::string* s, size_t at, uint32_t v) { std::memcpy(s->data() + at, &v, 4); }

// Frames `in` as a real segment: each block "header + uncompressed payload of compressed_size bytes"
// becomes "header + zstd(payload)" with raw_size, compressed_size and crc32 set. A torn tail is kept as is.
std::string Frame(std::string_view in) {
  if (in.size() < kFileHeaderSize) return std::string(in);
  std::string out(in.substr(0, kFileHeaderSize));
  size_t offset = kFileHeaderSize;
  while (in.size() - offset >= kBlockHeaderSize) {
    const uint32_t size = Load32(in.data() + offset + 16);
    if (in.size() - offset - kBlockHeaderSize < size) break;
    const std::string_view raw = in.substr(offset + kBlockHeaderSize, size);
    std::string packed(ZSTD_compressBound(raw.size()), '\0');
    const size_t n = ZSTD_compress(packed.data(), packed.size(), raw.data(), raw.size(), 1);
    if (ZSTD_isError(n)) break;
    packed.resize(n);
    std::string header(in.substr(offset, kBlockHeaderSize));
    Store32(&header, 12, static_cast<uint32_t>(raw.size()));
    Store32(&header, 16, static_cast<uint32_t>(packed.size()));
    Store32(&header, 20, crc32(0, reinterpret_cast<const Bytef*>(packed.data()), packed.size()));
    out += header;
    out += packed;
    offset += kBlockHeaderSize + size;
  }
  out.append(in.substr(offset));
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  strata::fuzz::CheckSegmentBytes(Frame(std::string_view(reinterpret_cast<const char*>(data), size)));
  return 0;
}
