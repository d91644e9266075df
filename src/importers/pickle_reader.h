// ParsePickle: a small, bounded reader of Python pickles holding plain data only -- what torch's Flight
// Recorder dumps are (torch's JIT pickler, protocol 2, without type tags: dicts, lists, tuples, str, int,
// float, bool, None) and what Python's pickle.dumps writes for such data at protocols 0 to 5.
//
// It never executes anything. GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, NEWOBJ_EX, the
// persistent ids (PERSID, BINPERSID), the extension registry (EXT1/2/4) and out-of-band buffers are refused
// with an error naming the opcode and its byte offset, whatever module or name they carry (Flight Recorder
// dumps need none: torch writes them with tag_aggregates off, see docs/flight-recorder.md). Sets, frozensets
// and protocol 0's quoted STRING are refused as unsupported.
//
// Supported opcodes: MARK STOP POP POP_MARK DUP; NONE NEWTRUE NEWFALSE; INT LONG BININT BININT1 BININT2 LONG1
// LONG4 (values within int64); FLOAT BINFLOAT; UNICODE BINUNICODE SHORT_BINUNICODE BINUNICODE8 (UTF-8
// checked, lone surrogates let through as Python's surrogatepass does); BINSTRING SHORT_BINSTRING (ASCII,
// decoded to str as Python 3 does by default); BINBYTES SHORT_BINBYTES BINBYTES8 BYTEARRAY8 (bytes);
// EMPTY_LIST LIST APPEND APPENDS; EMPTY_TUPLE TUPLE TUPLE1 TUPLE2 TUPLE3; EMPTY_DICT DICT SETITEM SETITEMS;
// PUT BINPUT LONG_BINPUT MEMOIZE GET BINGET LONG_BINGET; PROTO (0 to 5); FRAME. Bytes after STOP are ignored,
// as pickle.loads ignores them.
//
// Invariants: every error says the byte offset and why ("pickle: byte offset 17: GLOBAL ('c') refused: ...");
// the work and memory are bounded by PickleLimits (shared references -- a GET of a list stored earlier --
// are expanded into copies, each copy counted against the limits; on the way, the values created, the
// stack, the memo and the references containers hold are each at most max_items, MARKs open at once at most
// max_depth + 1, memo ids stored out of sequence at most 65,536); the result is a tree (a container that
// contains itself is an error).
#pragma once

#include <cstddef>
#include <string_view>

#include "core/status.h"
#include "importers/pickle_value.h"

namespace strata {

/// Bounds on what one pickle may cost; exceeding one is an error naming it.
struct PickleLimits {
  /// The pickle's size in bytes.
  size_t max_input_bytes = size_t{256} << 20;
  /// Containers nested in the result (a scalar at the top is depth 0; [1] is 1). The tree is built
  /// recursively, so this also bounds the reader's stack use.
  size_t max_depth = 64;
  /// Values in the result (every scalar and container, every copy of a shared one), and values the pickle
  /// creates on the way. About 100 bytes of memory each, so the default bounds the tree to under 1 GiB; a
  /// Flight Recorder dump of 2,000 entries with Python frames holds under a million.
  size_t max_items = size_t{8} << 20;
  /// Bytes of one str or bytes value.
  size_t max_string_bytes = size_t{64} << 20;
  /// Bytes of all str and bytes values in the result, copies included.
  size_t max_total_string_bytes = size_t{1} << 30;
};

/// The value a pickle holds, or an error naming the byte offset and the reason (see above).
Expected<PickleValue> ParsePickle(std::string_view bytes, const PickleLimits& limits = PickleLimits());

}  // namespace strata
