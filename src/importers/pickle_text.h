// Decoders of pickle opcode arguments that are more than fixed-width integers: UTF-8 checking, protocol 0's
// raw-unicode-escape strings and decimal lines, and the little-endian two's-complement integers of LONG1 and
// LONG4. Pure functions over bytes, no allocation beyond their output, no locale.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata::pickle_text {

/// Offset of the first byte that breaks UTF-8 in `s`, or npos when it is valid. Encoded surrogates
/// (U+D800..U+DFFF as three bytes) are accepted, as Python's 'surrogatepass' decoding accepts them.
size_t FindInvalidUtf8(std::string_view s);

/// Appends code point `cp` (at most U+10FFFF; surrogates encoded as three bytes) to `out` as UTF-8.
void AppendUtf8(uint32_t cp, std::string* out);

/// Decodes Python's raw-unicode-escape (protocol 0's UNICODE): each byte is its Latin-1 code point except
/// \uXXXX and \UXXXXXXXX after an odd number of backslashes. False with `why` for a truncated or
/// out-of-range escape.
bool DecodeRawUnicodeEscape(std::string_view in, std::string* utf8, std::string* why);

/// A decimal integer with an optional sign, within int64 ("-12", "+7", "0").
bool ParseDecimal(std::string_view text, int64_t* value);

/// A float as Python's float() reads repr() output: "1.5", "-2e-05", "inf", "nan".
bool ParseFloatText(std::string_view text, double* value);

/// The little-endian two's-complement integer of `bytes` (empty: 0). False when it needs more than 64 bits.
bool DecodeLittleEndianSigned(std::string_view bytes, int64_t* value);

}  // namespace strata::pickle_text
