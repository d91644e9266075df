// CPython 3.11's location table (a code object's co_linetable; PEP 626 and PEP 657, described in CPython's
// Objects/locations.md and decoded there by Objects/codeobject.c: _PyCode_CheckLineNumber, co_lines,
// co_positions): where in the source each code unit of co_code_adaptive comes from. python_frames.cc reads
// it from a live process and names each Python frame by the line its last instruction is on (py-spy's and
// tracebacks' line), not by the function's first line.
//
// The table is a sequence of entries, each covering 1 to 8 code units (instructions and their inline caches)
// in order. An entry's first byte has bit 7 set, its code in bits 3-6 and its length - 1 in bits 0-2:
//   15       no location (the units have no line: CPython's None);
//   14       long form: signed varint line delta, varint end-line delta, varint column + 1, varint end
//            column + 1;
//   13       no columns: signed varint line delta;
//   10-12    one line: line delta code - 10, then a byte each for the column and the end column;
//   0-9      short form: the same line, one byte: column = code * 8 + bits 4-6, end column = column + bits
//            0-3.
// Line deltas accumulate from co_firstlineno; a varint is 6-bit chunks, least significant first, bit 6 set
// on every chunk but the last; a signed varint is an unsigned one whose bit 0 is the sign.
// Invariants: the decoder reads only the bytes it is given (a table read from another process may be
// truncated or garbage: decoding stops at the first entry that does not fit, and what it did decode stays
// right); lines and columns are CPython's (columns 0-based, in UTF-8 bytes), -1 where CPython says None.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace strata::recorder {

/// Where a code unit comes from: CPython's co_positions() for it (-1 where that gives None).
struct PythonPosition {
  int line = -1;
  int end_line = -1;
  int column = -1;
  int end_column = -1;
  bool operator==(const PythonPosition&) const = default;
};

/// One entry of a location table: code units [start, end) (indexes of 2-byte code units) and their position.
struct PythonLocationRange {
  int start = 0;
  int end = 0;
  PythonPosition position;
};

/// The entries of `table` in order, lines counted from `first_line` (co_firstlineno). Stops at the end of
/// the table or at an entry that is cut short or does not start with bit 7 set (garbage): `complete`, when
/// given, says whether the whole table decoded.
std::vector<PythonLocationRange> DecodePythonLocations(std::span<const uint8_t> table, int first_line,
                                                       bool* complete = nullptr);

/// The line of code unit `unit` (PyCode_Addr2Line on byte offset 2 * unit): `first_line` for a unit before
/// the first (-1: a frame that has not started its first instruction); -1 for a unit with no line, or one
/// past what the table covers.
int PythonLineOfCodeUnit(std::span<const uint8_t> table, int first_line, int64_t unit);

}  // namespace strata::recorder
