// The bounded pickle reader (importers/pickle_reader): pickles written by Python's own pickle.dumps at
// protocols 0 to 5 read back as the same values Python's pickle.loads reads (compared through a canonical
// text both sides write), a Flight-Recorder-shaped dump, the encoding torch's JIT pickler writes, and every
// refusal and limit -- GLOBAL/REDUCE/BUILD/persistent ids with their byte offset, truncated input, a depth
// bomb, shared references that would expand without bound, a memo GET of an unknown id, a declared length
// beyond the input, a container inside itself.
#include "importers/pickle_reader.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "test_util.h"

namespace strata {
namespace {

using Kind = PickleValue::Kind;
using namespace std::string_literals;

/// `value` as `width` little-endian bytes.
std::string Le(uint64_t value, size_t width) {
  std::string out;
  for (size_t i = 0; i < width; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
  return out;
}

/// BINUNICODE of `s`.
std::string Uni(std::string_view s) { return "X" + Le(s.size(), 4) + std::string(s); }

// --- a canonical text of a value, written the same way by the test (C++) and by Python ----------------------

std::string Hex(const std::string& bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

std::string Canon(const PickleValue& v) {
  switch (v.kind()) {
    case Kind::kNone:
      return "N";
    case Kind::kBool:
      return v.as_bool() ? "B1" : "B0";
    case Kind::kInt:
      return "I" + std::to_string(v.as_int());
    case Kind::kFloat: {
      uint64_t bits = 0;
      const double d = v.as_float();
      std::memcpy(&bits, &d, sizeof bits);
      return "F" + std::to_string(bits);
    }
    case Kind::kString:
      return "S" + Hex(v.as_string());
    case Kind::kBytes:
      return "Y" + Hex(v.as_string());
    case Kind::kList:
    case Kind::kTuple: {
      std::string out = v.kind() == Kind::kList ? "L[" : "T[";
      for (size_t i = 0; i < v.items().size(); ++i) out += (i ? "," : "") + Canon(v.items()[i]);
      return out + "]";
    }
    case Kind::kDict: {
      std::string out = "D{";
      for (size_t i = 0; i < v.entries().size(); ++i) {
        out += (i ? "," : "") + Canon(v.entries()[i].first) + ":" + Canon(v.entries()[i].second);
      }
      return out + "}";
    }
  }
  return "?";
}

// Python's side: canon() as above; emit(data, extra) writes the pickle, canon(pickle.loads(data)) (or
// "ERROR <exception>") and `extra`.
constexpr const char* kPrelude = R"PY(
import pickle, pickletools, struct, sys
def canon(o):
    if o is None: return 'N'
    if isinstance(o, bool): return 'B%d' % o
    if isinstance(o, int): return 'I%d' % o
    if isinstance(o, float): return 'F%d' % struct.unpack('<Q', struct.pack('<d', o))[0]
    if isinstance(o, str): return 'S' + o.encode('utf-8', 'surrogatepass').hex()
    if isinstance(o, (bytes, bytearray)): return 'Y' + o.hex()
    if isinstance(o, list): return 'L[' + ','.join(canon(x) for x in o) + ']'
    if isinstance(o, tuple): return 'T[' + ','.join(canon(x) for x in o) + ']'
    if isinstance(o, dict): return 'D{' + ','.join(canon(k) + ':' + canon(v) for k, v in o.items()) + '}'
    raise TypeError(type(o))
def emit(data, extra=''):
    try:
        c = canon(pickle.loads(data))
    except Exception as e:
        c = 'ERROR ' + type(e).__name__
    out = sys.stdout.buffer
    out.write(len(data).to_bytes(8, 'little'))
    out.write(data)
    out.write((c + '\n' + str(extra)).encode())
def first_offset(data, names):
    for op, arg, pos in pickletools.genops(data):
        if op.name in names: return pos
    return -1
)PY";

struct FromPython {
  std::string pickle;  // the bytes
  std::string canon;   // what Python's pickle.loads read from them
  std::string extra;
};

FromPython RunPython(const std::string& body) {
  testing::TempFile script(std::string(kPrelude) + body + "\n", ".py");
  FromPython out;
  FILE* pipe = ::popen(("/usr/bin/python3 " + script.path()).c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot run /usr/bin/python3";
    return out;
  }
  std::string all;
  char buf[65536];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) all.append(buf, n);
  EXPECT_EQ(::pclose(pipe), 0) << "python failed on:\n" << body;
  if (all.size() < 8) return out;
  uint64_t len = 0;
  std::memcpy(&len, all.data(), 8);
  out.pickle = all.substr(8, len);
  const std::string rest = all.substr(8 + len);
  const size_t nl = rest.find('\n');
  out.canon = rest.substr(0, nl);
  out.extra = nl == std::string::npos ? "" : rest.substr(nl + 1);
  return out;
}

/// pickle.dumps(expr, protocol) by Python, and what pickle.loads reads back.
FromPython Dumps(const std::string& expr, int protocol) {
  return RunPython("emit(pickle.dumps(" + expr + ", protocol=" + std::to_string(protocol) + "))");
}

/// Raw bytes (a Python bytes literal) as Python's pickle.loads reads them.
FromPython Loads(const std::string& bytes_literal) { return RunPython("emit(" + bytes_literal + ")"); }

std::string Error(std::string_view bytes, const PickleLimits& limits = PickleLimits()) {
  auto r = ParsePickle(bytes, limits);
  EXPECT_FALSE(r.ok()) << "parsed: " << Canon(r.value());
  return r.ok() ? "" : r.error();
}

// A Flight Recorder dump's shape (version 2.4 fields, torch's FlightRecorder.hpp; docs/flight-recorder.md):
// frames shared between entries (a memo GET of a list), None durations, nested size lists, unicode.
constexpr const char* kFlightRecorderDump = R"PY(
frames = [{'name': 'all_reduce', 'filename': '/opt/torch/distributed/c10d.py', 'line': 2501},
          {'name': 'train_step \u2713', 'filename': 'train.py', 'line': 88}]
def entry(i, state):
    return {'record_id': i, 'pg_id': 0, 'process_group': ('0', 'default_pg'),
            'collective_seq_id': i + 1, 'p2p_seq_id': 0, 'op_id': i + 1,
            'profiling_name': 'nccl:all_reduce', 'time_created_ns': 1733222000123456789 + i,
            'duration_ms': None if state != 'completed' else 1.25,
            'input_sizes': [[1024, 1024], [3]], 'input_dtypes': ['Float', 'Int'],
            'output_sizes': [[1024, 1024], [3]], 'output_dtypes': ['Float', 'Int'],
            'state': state, 'time_discovered_started_ns': None if state == 'scheduled' else 1733222000200000000,
            'time_discovered_completed_ns': 1733222000300000000 if state == 'completed' else None,
            'retired': state == 'completed', 'timeout_ms': 600000, 'is_p2p': False, 'frames': frames}
dump = {'version': '2.4',
        'pg_config': {'0': {'name': '0', 'desc': 'default_pg', 'ranks': '[0, 1, 2, 3]'}},
        'pg_status': {'0': {'last_enqueued_collective': 3, 'last_started_collective': 2,
                            'last_completed_collective': 1}},
        'entries': [entry(0, 'completed'), entry(1, 'started'), entry(2, 'scheduled')]}
)PY";

TEST(PickleReader, ScalarsAndContainersReadAsPythonReadsThemAtEveryProtocol) {
  const std::string objects =
      "[None, True, False, 0, 1, 255, 256, 65535, 65536, -1, -256, 2**31 - 1, -2**31, 2**31, 2**62, 2**63 - 1, "
      "-2**63, 1.5, -0.0, 1e-300, float('inf'), -float('inf'), 0.1, '', 'abc', 'caf\\u00e9 \\u2713 \\U0001d11e', "
      "'back\\\\slash\\nnew line\\\\u1234', '\\ud800', [], (), {}, (1,), (1, 2), (1, 2, 3), (1, 2, 3, 4), "
      "{'a': [1, [2, [3, ()]]], 5: None, 2.5: 'x', None: 0, True: (1, 'y')}]";
  for (int protocol = 0; protocol <= 5; ++protocol) {
    SCOPED_TRACE("protocol " + std::to_string(protocol));
    const FromPython py = Dumps(objects, protocol);
    ASSERT_EQ(py.canon.rfind("L[N,B1,B0,I0,", 0), 0u) << py.canon;
    auto r = ParsePickle(py.pickle);
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(Canon(r.value()), py.canon);
  }
}

TEST(PickleReader, BytesReadAtProtocolsThreeToFive) {
  for (int protocol = 3; protocol <= 5; ++protocol) {
    const FromPython py = Dumps("[b'', b'\\x00\\xff' * 200, b'ab', b'x' * 300]", protocol);
    auto r = ParsePickle(py.pickle);
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(Canon(r.value()), py.canon);
    EXPECT_EQ(r.value().items()[1].kind(), Kind::kBytes);
    EXPECT_EQ(r.value().items()[1].as_string().size(), 400u);
  }
  // Protocol 5 writes a bytearray as BYTEARRAY8 (read as bytes); earlier ones call the bytearray class.
  auto r = ParsePickle(Dumps("bytearray(b'ab')", 5).pickle);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.value(), PickleValue::Bytes("ab"));
  EXPECT_NE(Error(Dumps("bytearray(b'ab')", 4).pickle).find("refused: it imports a Python object by name"),
            std::string::npos);
  EXPECT_NE(Error(Dumps("{1, 2}", 4).pickle).find("EMPTY_SET (0x8f): unsupported"), std::string::npos);
}

TEST(PickleReader, FlightRecorderShapedDumpRoundTrips) {
  for (int protocol : {0, 1, 2, 4}) {
    SCOPED_TRACE("protocol " + std::to_string(protocol));
    const FromPython py = RunPython(std::string(kFlightRecorderDump) +
                                    "emit(pickle.dumps(dump, protocol=" + std::to_string(protocol) + "))");
    auto r = ParsePickle(py.pickle);
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(Canon(r.value()), py.canon);
    const PickleValue& dump = r.value();
    ASSERT_NE(dump.Find("version"), nullptr);
    EXPECT_EQ(dump.Find("version")->as_string(), "2.4");
    EXPECT_EQ(dump.Find("pg_config")->Find("0")->Find("ranks")->as_string(), "[0, 1, 2, 3]");
    EXPECT_EQ(dump.Find("pg_status")->Find("0")->Find("last_enqueued_collective")->as_int(), 3);
    const PickleValue::Items& entries = dump.Find("entries")->items();
    ASSERT_EQ(entries.size(), 3u);
    EXPECT_EQ(entries[1].Find("collective_seq_id")->as_int(), 2);
    EXPECT_EQ(entries[2].Find("time_created_ns")->as_int(), 1733222000123456791);
    EXPECT_EQ(entries[0].Find("duration_ms")->as_float(), 1.25);
    EXPECT_TRUE(entries[1].Find("duration_ms")->is_none());
    EXPECT_EQ(entries[2].Find("state")->as_string(), "scheduled");
    EXPECT_EQ(entries[0].Find("retired")->kind(), Kind::kBool);
    EXPECT_TRUE(entries[0].Find("retired")->as_bool());
    EXPECT_EQ(entries[1].Find("input_sizes")->items()[0].items()[1].as_int(), 1024);
    EXPECT_EQ(entries[1].Find("process_group")->kind(), Kind::kTuple);
    EXPECT_EQ(entries[1].Find("process_group")->items()[1].as_string(), "default_pg");
    // The frames list is one object in Python, stored once and fetched from the memo by the later entries:
    // every entry holds its own equal copy.
    EXPECT_EQ(*entries[2].Find("frames"), *entries[0].Find("frames"));
    EXPECT_EQ(entries[2].Find("frames")->items()[1].Find("name")->as_string(), "train_step \xe2\x9c\x93");
  }
}

// What torch's JIT pickler writes for a Flight Recorder dump (protocol 2, no type tags): EMPTY_DICT, MARK,
// keys and values, SETITEMS, then BINPUT; ints as BININT1/BININT2/BININT or an 8-byte LONG1; BINUNICODE;
// a repeated str fetched with BINGET.
TEST(PickleReader, ReadsTheEncodingOfTorchsJitPickler) {
  const std::string torch_style = "\x80\x02}("s + Uni("version") + "q\x00"s + Uni("2.4") + "q\x01"s + Uni("entries") +
                                  "q\x02](}("s + Uni("id") + "K\x07"s + Uni("ns") + "M\x10\x27"s + Uni("t") +
                                  "\x8a\x08"s + Le(123456789, 8) + Uni("v") + "h\x01"s + Uni("n") + "J"s +
                                  Le(0xfffffffe, 4) + Uni("p") + "\x88\x89\x86uq\x03"s + "eq\x04uq\x05."s;
  const FromPython py = Loads("bytes.fromhex('" + Hex(torch_style) + "')");
  ASSERT_EQ(py.canon.rfind("D{", 0), 0u) << py.canon;
  auto r = ParsePickle(torch_style);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(Canon(r.value()), py.canon);
  const PickleValue& entry = r.value().Find("entries")->items()[0];
  EXPECT_EQ(entry.Find("t")->as_int(), 123456789);
  EXPECT_EQ(entry.Find("v")->as_string(), "2.4");
  EXPECT_EQ(entry.Find("n")->as_int(), -2);
  EXPECT_EQ(Canon(*entry.Find("p")), "T[B1,B0]");
}

TEST(PickleReader, RefusesGlobalAndReduceNamingOpcodeAndOffset) {
  for (int protocol : {0, 2, 4}) {
    for (const char* expr :
         {"__import__('datetime').datetime(2024, 1, 2)", "__import__('collections').OrderedDict(a=1)",
          "{'ok': [1, __import__('fractions').Fraction(1, 3)]}"}) {
      SCOPED_TRACE(std::string(expr) + " protocol " + std::to_string(protocol));
      const FromPython py =
          RunPython("d = pickle.dumps(" + std::string(expr) + ", protocol=" + std::to_string(protocol) +
                    ")\nemit(d, first_offset(d, ('GLOBAL', 'STACK_GLOBAL')))");
      ASSERT_FALSE(py.extra.empty());
      ASSERT_NE(py.extra, "-1");
      const std::string error = Error(py.pickle);
      EXPECT_NE(error.find("byte offset " + py.extra + ": "), std::string::npos) << error;
      EXPECT_NE(error.find(protocol < 4 ? "GLOBAL ('c')" : "STACK_GLOBAL (0x93)"), std::string::npos) << error;
      EXPECT_NE(error.find("refused"), std::string::npos) << error;
    }
  }
  EXPECT_NE(Error(Dumps("__import__('datetime').date(2024, 1, 2)", 2).pickle).find("imports datetime.date"),
            std::string::npos);
  // REDUCE, BUILD, persistent ids and instances without a GLOBAL before them are refused where they stand.
  EXPECT_NE(Error(std::string("\x80\x02N)R.", 5)).find("byte offset 4: REDUCE ('R'): refused"), std::string::npos);
  EXPECT_NE(Error(std::string("\x80\x02}Nb.", 5)).find("byte offset 4: BUILD ('b'): refused"), std::string::npos);
  EXPECT_NE(Error(std::string("\x80\x02X\x01\x00\x00\x00xQ.", 10)).find("byte offset 8: BINPERSID ('Q')"),
            std::string::npos);
  EXPECT_NE(Error("Pxyz\n.").find("byte offset 0: PERSID ('P'): refused"), std::string::npos);
  EXPECT_NE(Error("(iabc\ndef\n.").find("byte offset 1: INST ('i'): refused: it imports abc.def"), std::string::npos);
  EXPECT_NE(Error(std::string("\x80\x02)\x81.", 5)).find("NEWOBJ (0x81)"), std::string::npos);
  EXPECT_NE(Error(std::string("\x80\x02\x82\x01.", 5)).find("EXT1 (0x82)"), std::string::npos);
}

TEST(PickleReader, EveryTruncationOfADumpIsAnErrorWithItsOffset) {
  const FromPython py = RunPython(std::string(kFlightRecorderDump) + "emit(pickle.dumps(dump, protocol=2))");
  ASSERT_GT(py.pickle.size(), 500u);
  ASSERT_TRUE(ParsePickle(py.pickle).ok());
  for (size_t n = 0; n < py.pickle.size(); ++n) {
    auto r = ParsePickle(std::string_view(py.pickle).substr(0, n));
    ASSERT_FALSE(r.ok()) << "prefix of " << n << " bytes parsed";
    ASSERT_EQ(r.error().rfind("pickle: byte offset ", 0), 0u) << r.error();
  }
  EXPECT_EQ(Error(std::string_view(py.pickle).substr(0, py.pickle.size() - 1)),
            "pickle: byte offset " + std::to_string(py.pickle.size() - 1) +
                ": the input ends before STOP ('.'): truncated pickle");
  EXPECT_NE(Error("\x80\x02X\x05\x00\x00\x00"s + "ab").find("the string needs 5 bytes but the input ends after 2"),
            std::string::npos);
  EXPECT_NE(Error("I12").find("byte offset 0: INT ('I'): its text argument has no ending newline"), std::string::npos);
}

TEST(PickleReader, DeclaredLengthBeyondTheInputIsAnError) {
  EXPECT_EQ(Error("\x80\x02X\xff\xff\xff\x7f"s + "abc."),
            "pickle: byte offset 2: BINUNICODE ('X'): the string needs 2147483647 bytes but the input ends after 4: "
            "truncated pickle");
  EXPECT_NE(Error(std::string("\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\xff"
                              "a.",
                              13))
                .find("byte offset 2: BINUNICODE8 (0x8d): the string needs 18446744073709551615 bytes"),
            std::string::npos);
  EXPECT_NE(Error(std::string("\x80\x04\x95\x00\x00\x00\x00\x00\x01\x00\x00N.", 13))
                .find("FRAME (0x95): the frame needs 1099511627776 bytes"),
            std::string::npos);
  EXPECT_NE(Error(std::string("\x80\x02\x8b\xff\xff\xff\xff.", 8)).find("LONG4 (0x8b): negative byte count"),
            std::string::npos);
  PickleLimits small;
  small.max_string_bytes = 10;
  const FromPython py = Dumps("'x' * 11", 2);
  EXPECT_NE(Error(py.pickle, small).find("a string of 11 bytes, over the limit of 10"), std::string::npos);
  small.max_string_bytes = 11;
  EXPECT_TRUE(ParsePickle(py.pickle, small).ok());
}

std::string NestedLists(size_t depth) {
  return "\x80\x02" + std::string(depth, ']') + std::string(depth - 1, 'a') + ".";
}

TEST(PickleReader, DepthBombStopsAtMaxDepth) {
  PickleLimits limits;
  ASSERT_EQ(limits.max_depth, 64u);
  auto at_limit = ParsePickle(NestedLists(64));
  ASSERT_TRUE(at_limit.ok()) << at_limit.error();
  const PickleValue* v = &at_limit.value();
  size_t depth = 0;
  for (; v->kind() == Kind::kList && !v->items().empty(); v = &v->items()[0]) ++depth;
  EXPECT_EQ(depth, 63u);  // 64 lists, the innermost empty
  EXPECT_NE(Error(NestedLists(65)).find("nests deeper than 64 containers (PickleLimits::max_depth)"),
            std::string::npos);
  // A million nested lists: refused without exhausting the stack.
  EXPECT_NE(Error(NestedLists(1000000)).find("max_depth"), std::string::npos);
  // Python's own nesting, as deep as the limit allows and one more.
  EXPECT_TRUE(ParsePickle(Dumps("eval('[' * 64 + ']' * 64)", 2).pickle).ok());
  EXPECT_FALSE(ParsePickle(Dumps("eval('[' * 65 + ']' * 65)", 2).pickle).ok());
}

TEST(PickleReader, SharedReferencesCannotExpandWithoutBound) {
  // x0 = [1]; x(i+1) = [x(i), x(i)]: 2^40 values once expanded, from a pickle of 200 bytes.
  std::string bomb = "\x80\x02]q\x00K\x01"s + "a";
  for (int i = 0; i < 40; ++i) {
    bomb += std::string("(h") + static_cast<char>(i) + "h" + static_cast<char>(i) + "lq" + static_cast<char>(i + 1);
  }
  bomb += ".";
  EXPECT_NE(Error(bomb).find("more than 8388608 values in all (PickleLimits::max_items"), std::string::npos);
  PickleLimits bytes_limit;
  bytes_limit.max_total_string_bytes = 1000;
  const FromPython py = RunPython("s = 'x' * 100\nemit(pickle.dumps([s] * 11, protocol=2))");
  EXPECT_NE(Error(py.pickle, bytes_limit).find("over 1000 bytes in all"), std::string::npos);
  EXPECT_NE(Error(std::string("\x80\x02NNNN.", 7), PickleLimits{.max_items = 3}).find("more than 3 values"),
            std::string::npos);
}

TEST(PickleReader, MemoErrors) {
  EXPECT_EQ(Error(std::string("\x80\x02h\x05.", 5)),
            "pickle: byte offset 2: BINGET ('h'): memo id 5 was never stored (no PUT before this GET)");
  EXPECT_NE(Error(std::string("\x80\x02N\x94j\x01\x00\x00\x00.", 10)).find("LONG_BINGET ('j'): memo id 1 was never"),
            std::string::npos);
  EXPECT_NE(Error("g7\n.").find("byte offset 0: GET ('g'): memo id 7"), std::string::npos);
  EXPECT_NE(Error("Np-1\n.").find("PUT ('p'): '-1' is not a memo id"), std::string::npos);
  EXPECT_NE(Error(std::string("\x80\x02q\x00.", 5)).find("BINPUT ('q'): the stack is empty"), std::string::npos);
  // MEMOIZE numbers entries in order, as Python does.
  auto r = ParsePickle("\x80\x04N\x94K\x07\x94(h\x01h\x00h\x01l."s);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(Canon(r.value()), "L[I7,N,I7]");
}

TEST(PickleReader, WorkOnTheWayIsBounded) {
  // MARKs: at most max_depth + 1 open at once.
  EXPECT_TRUE(ParsePickle(std::string(65, '(') + "N.").ok());
  EXPECT_NE(Error(std::string(66, '(') + "N.").find("byte offset 65: MARK ('('): more than 65 MARKs open at once"),
            std::string::npos);
  // The stack and the references containers hold: at most max_items each.
  PickleLimits six;
  six.max_items = 6;
  EXPECT_NE(Error("N222222.", six).find("byte offset 6: DUP ('2'): more than 6 values on the stack"),
            std::string::npos);
  PickleLimits seven;
  seven.max_items = 7;
  EXPECT_TRUE(ParsePickle("](N2e(N2e(N2e.", seven).ok());  // a list of six Nones: 7 values
  EXPECT_NE(Error("](N2e(N2e(N2e(N2e.", seven).find("containers hold more than 7 references in all"),
            std::string::npos);
  // Memo ids out of sequence: kept apart, joined to the sequence once the gap is filled, and bounded.
  auto r = ParsePickle("\x80\x02K\x07r\x01\x00\x00\x00K\x08q\x00\x94(h\x00h\x01h\x02l."s);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(Canon(r.value()), "L[I8,I7,I8]");
  std::string sparse = "N";
  for (uint32_t id = 1; id <= 65537; ++id) sparse += "r" + Le(id * 2, 4);
  EXPECT_NE(Error(sparse + ".").find("more than 65536 memo ids stored out of sequence"), std::string::npos);
}

TEST(PickleReader, ContainerInsideItselfIsRefused) {
  const FromPython py = RunPython("a = []\na.append(a)\nemit(pickle.dumps(a, protocol=2))");
  EXPECT_NE(Error(py.pickle).find("byte offset 2: the list created here contains itself"), std::string::npos);
}

TEST(PickleReader, DictKeysFollowPython) {
  // A repeated key keeps its place and first key, and takes the last value; 1, 1.0 and True are one key.
  const std::string dup =
      "\x80\x02}(K\x01"s + Uni("a") + "G?\xf0\x00\x00\x00\x00\x00\x00"s + Uni("b") + "K\x02N\x88"s + Uni("c") + "u."s;
  const FromPython py = Loads("bytes.fromhex('" + Hex(dup) + "')");
  auto r = ParsePickle(dup);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(Canon(r.value()), py.canon);
  EXPECT_EQ(Canon(r.value()), "D{I1:S63,I2:N}");
  EXPECT_NE(Error(std::string("\x80\x02}(]K\x01u.", 9)).find("a dict key is a list (created at byte offset 4)"),
            std::string::npos);
  EXPECT_NE(Error(std::string("\x80\x02)K\x01K\x02s.", 9)).find("the value it adds to is a tuple"), std::string::npos);
}

TEST(PickleReader, OtherMalformedInput) {
  EXPECT_EQ(Error(""), "pickle: byte offset 0: the input is empty");
  EXPECT_NE(Error(std::string("\x80\x06N.", 4)).find("unsupported pickle protocol 6"), std::string::npos);
  EXPECT_NE(Error(std::string("\x80\x02\xff.", 4)).find("byte offset 2: unknown opcode (0xff)"), std::string::npos);
  EXPECT_NE(Error(std::string("\x80\x02X\x02\x00\x00\x00\xc3(.", 10)).find("invalid UTF-8 at byte offset 7"),
            std::string::npos);
  EXPECT_NE(Error(Dumps("2**64", 2).pickle).find("LONG1 (0x8a): an integer of 9 bytes beyond 64 bits"),
            std::string::npos);
  EXPECT_NE(Error(Dumps("2**64", 0).pickle).find("is not a decimal integer within 64 bits"), std::string::npos);
  EXPECT_NE(Error(".").find("STOP ('.'): the stack is empty"), std::string::npos);
  EXPECT_NE(Error("(K\x01"
                  "a.")
                .find("APPEND ('a'): needs 2 values"),
            std::string::npos);
  EXPECT_NE(Error("e.").find("APPENDS ('e'): no MARK"), std::string::npos);
  EXPECT_NE(Error("(K\x01K\x02K\x03"
                  "d.")
                .find("3 items between MARK and here"),
            std::string::npos);
  EXPECT_NE(Error(Dumps("b'ab'", 2).pickle).find("refused: it imports _codecs.encode"), std::string::npos);
  EXPECT_NE(Error("S'abc'\n.").find("STRING ('S'): unsupported"), std::string::npos);
  EXPECT_NE(Error(std::string("\x80\x02U\x01\xe9.", 6)).find("non-ASCII byte at byte offset 4"), std::string::npos);
  EXPECT_NE(Error("V\\u12\n.").find("truncated \\uXXXX escape"), std::string::npos);
  PickleLimits tiny;
  tiny.max_input_bytes = 3;
  EXPECT_EQ(Error("N.  ", tiny), "pickle: 4 bytes, over the limit of 3 (PickleLimits::max_input_bytes)");
  // Bytes after STOP are ignored, as pickle.loads ignores them; POP and POP_MARK drop values.
  auto r = ParsePickle(
      "(K\x01K\x02"
      "1K\x03K\x04"
      "0.garbage");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(Canon(r.value()), "I3");
}

TEST(PickleValue, FindAndEquality) {
  PickleValue dict = PickleValue::Dict({{PickleValue::Int(1), PickleValue::String("int key")},
                                        {PickleValue::String("k"), PickleValue::List({PickleValue()})}});
  ASSERT_NE(dict.Find("k"), nullptr);
  EXPECT_EQ(dict.Find("k")->items().size(), 1u);
  EXPECT_EQ(dict.Find("1"), nullptr);
  EXPECT_EQ(PickleValue::String("x").Find("x"), nullptr);
  EXPECT_NE(PickleValue::List(), PickleValue::Tuple());
  EXPECT_NE(PickleValue::String("a"), PickleValue::Bytes("a"));
  EXPECT_NE(PickleValue::Int(1), PickleValue::Bool(true));
  EXPECT_EQ(PickleValue::KindName(Kind::kNone), std::string("NoneType"));
}

}  // namespace
}  // namespace strata
