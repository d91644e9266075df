// The unpickling machine of ParsePickle (see pickle_reader.h), written from the opcode descriptions of
// CPython's pickletools: a stack of values with MARK positions, a memo, and the value graph the opcodes
// build (importers/pickle_graph.h), expanded into a tree at STOP. Opcodes that would import or call Python
// code are refused before anything else happens with them.
#include "importers/pickle_reader.h"

#include <cstring>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "importers/pickle_graph.h"
#include "importers/pickle_opcodes.h"
#include "importers/pickle_text.h"

namespace strata {
namespace {

namespace op = pickle_op;
using Kind = PickleValue::Kind;

/// `text` for an error message: printable ASCII, other bytes as '?', at most 60 characters.
std::string Printable(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 60)) out += c >= 0x20 && c < 0x7f ? c : '?';
  return text.size() > 60 ? out + "..." : out;
}

/// How a counted string opcode's bytes become a value.
enum class TextKind { kUtf8, kAscii, kBytes };

/// Memo ids a pickle may store out of sequence (Python and torch number them 0, 1, 2, ...).
constexpr size_t kMaxSparseMemo = 65536;

/// One run of the machine over one pickle. Invariants: marks_ are non-decreasing positions into stack_; every
/// index on stack_ or in the memo names a node of nodes_; nodes_, stack_, the memo and the references held by
/// containers never exceed the limits' max_items, open MARKs never exceed max_depth + 1; memo_dense_ holds
/// ids 0..size-1 and memo_sparse_ only larger ids, so len(memo) is the sum of their sizes.
class Machine {
 public:
  Machine(std::string_view in, const PickleLimits& limits) : in_(in), limits_(limits) {}

  Expected<PickleValue> Run() {
    while (!stopped_) {
      if (pos_ >= in_.size()) {
        return Status::BadInput(
            fmt::format("pickle: byte offset {}: the input ends before STOP ('.'): truncated pickle", pos_),
            ErrorPlace::AtOffset("", pos_));
      }
      op_start_ = pos_;
      op_ = static_cast<uint8_t>(in_[pos_++]);
      if (Status st = Step(); !st.ok()) return st;
    }
    return ExpandPickleGraph(nodes_, root_, limits_);
  }

 private:
  Status Fail(const std::string& why) const {
    return Status::BadInput(fmt::format("pickle: byte offset {}: {}: {}", op_start_, op::Describe(op_), why),
                            ErrorPlace::AtOffset("", op_start_));
  }

  Status Step() {
    switch (op_) {
      case op::kMark:
        return Mark();
      case op::kStop:
        stopped_ = true;
        return PopValue(&root_);
      case op::kPop:
        return Pop();
      case op::kPopMark: {
        std::vector<uint32_t> dropped;
        return PopToMark(&dropped);
      }
      case op::kDup: {
        uint32_t top = 0;
        if (Status st = Top(&top); !st.ok()) return st;
        return PushIndex(top);
      }
      case op::kProto:
        return Proto();
      case op::kFrame:
        return Frame();
      default:
        return StepValue();
    }
  }

  // Opcodes that push a scalar or build a container.
  Status StepValue() {
    switch (op_) {
      case op::kNone:
        return PushScalar(Kind::kNone, 0);
      case op::kNewTrue:
      case op::kNewFalse:
        return PushScalar(Kind::kBool, op_ == op::kNewTrue ? 1 : 0);
      case op::kBinInt:
        return FixedInt(4, true);
      case op::kBinInt1:
        return FixedInt(1, false);
      case op::kBinInt2:
        return FixedInt(2, false);
      case op::kLong1:
        return BinLong(1);
      case op::kLong4:
        return BinLong(4);
      case op::kInt:
      case op::kLong:
        return TextInt();
      case op::kFloat:
        return TextFloat();
      case op::kBinFloat:
        return BinFloat();
      default:
        return StepText();
    }
  }

  Status StepText() {
    switch (op_) {
      case op::kUnicode:
        return TextUnicode();
      case op::kBinUnicode:
        return Counted(4, TextKind::kUtf8);
      case op::kShortBinUnicode:
        return Counted(1, TextKind::kUtf8);
      case op::kBinUnicode8:
        return Counted(8, TextKind::kUtf8);
      case op::kBinString:
        return Counted(4, TextKind::kAscii);
      case op::kShortBinString:
        return Counted(1, TextKind::kAscii);
      case op::kBinBytes:
        return Counted(4, TextKind::kBytes);
      case op::kShortBinBytes:
        return Counted(1, TextKind::kBytes);
      case op::kBinBytes8:
      case op::kByteArray8:
        return Counted(8, TextKind::kBytes);
      default:
        return StepContainer();
    }
  }

  Status StepContainer() {
    switch (op_) {
      case op::kEmptyList:
        return PushContainer(Kind::kList, {});
      case op::kEmptyTuple:
        return PushContainer(Kind::kTuple, {});
      case op::kEmptyDict:
        return PushContainer(Kind::kDict, {});
      case op::kList:
      case op::kTuple:
      case op::kDict:
        return FromMark();
      case op::kTuple1:
      case op::kTuple2:
      case op::kTuple3:
        return SmallTuple(op_ - op::kTuple1 + 1);
      case op::kAppend:
      case op::kSetItem:
        return AddOne();
      case op::kAppends:
      case op::kSetItems:
        return AddFromMark();
      default:
        return StepMemo();
    }
  }

  Status StepMemo() {
    switch (op_) {
      case op::kPut:
      case op::kGet:
        return TextMemo();
      case op::kBinPut:
      case op::kBinGet:
        return BinMemo(1);
      case op::kLongBinPut:
      case op::kLongBinGet:
        return BinMemo(4);
      case op::kMemoize:
        return Put(memo_dense_.size() + memo_sparse_.size());
      default:
        return Refuse();
    }
  }

  // --- reading arguments ---------------------------------------------------------------------------------

  Status Need(uint64_t n, const char* what) const {
    const size_t left = in_.size() - pos_;
    if (n <= left) return Status::Ok();
    return Fail(fmt::format("{} needs {} bytes but the input ends after {}: truncated pickle", what, n, left));
  }

  Status ReadUnsigned(size_t width, uint64_t* value) {
    if (Status st = Need(width, "its argument"); !st.ok()) return st;
    *value = 0;
    for (size_t i = 0; i < width; ++i) *value |= uint64_t{static_cast<unsigned char>(in_[pos_ + i])} << (8 * i);
    pos_ += width;
    return Status::Ok();
  }

  /// The text up to the next '\n' (excluded; the newline is consumed).
  Status ReadLine(std::string_view* line) {
    const size_t nl = in_.find('\n', pos_);
    if (nl == std::string_view::npos) return Fail("its text argument has no ending newline: truncated pickle");
    *line = in_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    return Status::Ok();
  }

  // --- the stack -----------------------------------------------------------------------------------------

  size_t Cap() const { return std::min<size_t>(limits_.max_items, std::numeric_limits<uint32_t>::max() - 1); }

  Status PushIndex(uint32_t index) {
    if (stack_.size() >= Cap()) {
      return Fail(fmt::format("more than {} values on the stack at once (PickleLimits::max_items)", Cap()));
    }
    stack_.push_back(index);
    return Status::Ok();
  }

  Status Mark() {
    if (marks_.size() > limits_.max_depth) {
      return Fail(fmt::format("more than {} MARKs open at once: nesting deeper than PickleLimits::max_depth",
                              limits_.max_depth + 1));
    }
    marks_.push_back(stack_.size());
    return Status::Ok();
  }

  /// Counts `n` more references held by containers against max_items.
  Status Hold(size_t n) {
    held_ += n;
    if (held_ <= Cap()) return Status::Ok();
    return Fail(fmt::format("containers hold more than {} references in all (PickleLimits::max_items)", Cap()));
  }

  size_t Floor() const { return marks_.empty() ? 0 : marks_.back(); }

  Status Top(uint32_t* index) const {
    if (stack_.size() <= Floor()) return Fail("the stack is empty (or holds only values before a MARK)");
    *index = stack_.back();
    return Status::Ok();
  }

  Status PopValue(uint32_t* index) {
    if (Status st = Top(index); !st.ok()) return st;
    stack_.pop_back();
    return Status::Ok();
  }

  // Python's POP takes the top value, or the MARK when none is above it.
  Status Pop() {
    if (stack_.size() > Floor()) {
      stack_.pop_back();
      return Status::Ok();
    }
    if (marks_.empty()) return Fail("the stack is empty");
    marks_.pop_back();
    return Status::Ok();
  }

  Status PopToMark(std::vector<uint32_t>* items) {
    if (marks_.empty()) return Fail("no MARK on the stack to take items up to");
    items->assign(stack_.begin() + static_cast<ptrdiff_t>(marks_.back()), stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return Status::Ok();
  }

  // --- creating values -----------------------------------------------------------------------------------

  Status NewNode(PickleNode node) {
    if (nodes_.size() >= Cap()) {
      return Fail(fmt::format("the pickle creates more than {} values (PickleLimits::max_items)", Cap()));
    }
    if (Status st = Hold(node.children.size()); !st.ok()) return st;
    node.offset = op_start_;
    if (Status st = PushIndex(static_cast<uint32_t>(nodes_.size())); !st.ok()) return st;
    nodes_.push_back(std::move(node));
    return Status::Ok();
  }

  Status PushScalar(Kind kind, int64_t value) {
    PickleNode node;
    node.kind = kind;
    node.int_value = value;
    return NewNode(std::move(node));
  }

  Status PushContainer(Kind kind, std::vector<uint32_t> children) {
    PickleNode node;
    node.kind = kind;
    node.children = std::move(children);
    return NewNode(std::move(node));
  }

  Status FixedInt(size_t width, bool is_signed) {
    uint64_t raw = 0;
    if (Status st = ReadUnsigned(width, &raw); !st.ok()) return st;
    const int64_t value =
        is_signed ? static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(raw))) : static_cast<int64_t>(raw);
    return PushScalar(Kind::kInt, value);
  }

  Status BinLong(size_t width) {
    uint64_t n = 0;
    if (Status st = ReadUnsigned(width, &n); !st.ok()) return st;
    if (width == 4 && n > uint64_t{std::numeric_limits<int32_t>::max()}) return Fail("negative byte count");
    if (Status st = Need(n, "the integer"); !st.ok()) return st;
    int64_t value = 0;
    if (!pickle_text::DecodeLittleEndianSigned(in_.substr(pos_, n), &value)) {
      return Fail(fmt::format("an integer of {} bytes beyond 64 bits; strata reads 64-bit integers only", n));
    }
    pos_ += n;
    return PushScalar(Kind::kInt, value);
  }

  // INT ("I01\n" is True, "I00\n" False, as protocol 0 writes bools) and LONG ("12L\n").
  Status TextInt() {
    std::string_view line;
    if (Status st = ReadLine(&line); !st.ok()) return st;
    if (op_ == op::kInt && (line == "00" || line == "01")) return PushScalar(Kind::kBool, line == "01" ? 1 : 0);
    std::string_view digits = line;
    if (op_ == op::kLong && !digits.empty() && digits.back() == 'L') digits.remove_suffix(1);
    int64_t value = 0;
    if (!pickle_text::ParseDecimal(digits, &value)) {
      return Fail(fmt::format("'{}' is not a decimal integer within 64 bits", Printable(line)));
    }
    return PushScalar(Kind::kInt, value);
  }

  Status TextFloat() {
    std::string_view line;
    if (Status st = ReadLine(&line); !st.ok()) return st;
    PickleNode node;
    node.kind = Kind::kFloat;
    if (!pickle_text::ParseFloatText(line, &node.float_value)) {
      return Fail(fmt::format("'{}' is not a float", Printable(line)));
    }
    return NewNode(std::move(node));
  }

  Status BinFloat() {
    if (Status st = Need(8, "its argument"); !st.ok()) return st;
    uint64_t bits = 0;
    for (size_t i = 0; i < 8; ++i) bits = (bits << 8) | static_cast<unsigned char>(in_[pos_ + i]);  // big-endian
    pos_ += 8;
    PickleNode node;
    node.kind = Kind::kFloat;
    std::memcpy(&node.float_value, &bits, sizeof bits);
    return NewNode(std::move(node));
  }

  Status TextUnicode() {
    std::string_view line;
    if (Status st = ReadLine(&line); !st.ok()) return st;
    PickleNode node;
    node.kind = Kind::kString;
    std::string why;
    if (!pickle_text::DecodeRawUnicodeEscape(line, &node.text, &why)) return Fail(why);
    if (node.text.size() > limits_.max_string_bytes) return StringTooLong(node.text.size());
    return NewNode(std::move(node));
  }

  Status StringTooLong(uint64_t n) const {
    return Fail(fmt::format("a string of {} bytes, over the limit of {} (PickleLimits::max_string_bytes)", n,
                            limits_.max_string_bytes));
  }

  // BINUNICODE and friends: a byte count, then the bytes.
  Status Counted(size_t width, TextKind text_kind) {
    uint64_t n = 0;
    if (Status st = ReadUnsigned(width, &n); !st.ok()) return st;
    if (op_ == op::kBinString && n > uint64_t{std::numeric_limits<int32_t>::max()}) return Fail("negative length");
    if (Status st = Need(n, "the string"); !st.ok()) return st;
    if (n > limits_.max_string_bytes) return StringTooLong(n);
    const std::string_view bytes = in_.substr(pos_, n);
    if (Status st = CheckText(bytes, text_kind); !st.ok()) return st;
    pos_ += n;
    PickleNode node;
    node.kind = text_kind == TextKind::kBytes ? Kind::kBytes : Kind::kString;
    node.text.assign(bytes);
    return NewNode(std::move(node));
  }

  Status CheckText(std::string_view bytes, TextKind text_kind) const {
    if (text_kind == TextKind::kUtf8) {
      const size_t bad = pickle_text::FindInvalidUtf8(bytes);
      if (bad == std::string_view::npos) return Status::Ok();
      return Fail(fmt::format("invalid UTF-8 at byte offset {}", pos_ + bad));
    }
    if (text_kind == TextKind::kAscii) {
      for (size_t i = 0; i < bytes.size(); ++i) {
        if (static_cast<unsigned char>(bytes[i]) >= 0x80) {
          return Fail(
              fmt::format("non-ASCII byte at byte offset {} (Python 3 reads this Python 2 str as ASCII)", pos_ + i));
        }
      }
    }
    return Status::Ok();
  }

  // --- containers ----------------------------------------------------------------------------------------

  bool IsScalar(uint32_t index) const { return nodes_[index].kind < Kind::kList; }

  Status CheckKeys(const std::vector<uint32_t>& pairs) const {
    if (pairs.size() % 2 != 0)
      return Fail(fmt::format("{} items between MARK and here: not key/value pairs", pairs.size()));
    for (size_t i = 0; i < pairs.size(); i += 2) {
      if (!IsScalar(pairs[i])) {
        return Fail(fmt::format("a dict key is a {} (created at byte offset {}); strata reads scalar keys only",
                                PickleValue::KindName(nodes_[pairs[i]].kind), nodes_[pairs[i]].offset));
      }
    }
    return Status::Ok();
  }

  // LIST, TUPLE, DICT: a new container of the items above the top MARK.
  Status FromMark() {
    std::vector<uint32_t> items;
    if (Status st = PopToMark(&items); !st.ok()) return st;
    if (op_ == op::kDict) {
      if (Status st = CheckKeys(items); !st.ok()) return st;
      return PushContainer(Kind::kDict, std::move(items));
    }
    return PushContainer(op_ == op::kList ? Kind::kList : Kind::kTuple, std::move(items));
  }

  Status SmallTuple(size_t n) {
    if (stack_.size() - Floor() < n) return Fail(fmt::format("needs {} values on the stack", n));
    std::vector<uint32_t> items(stack_.end() - static_cast<ptrdiff_t>(n), stack_.end());
    stack_.resize(stack_.size() - n);
    return PushContainer(Kind::kTuple, std::move(items));
  }

  /// The container on top of the stack, which must be of `kind` (a list for APPEND, a dict for SETITEM).
  Status Target(Kind kind, PickleNode** target) {
    uint32_t index = 0;
    if (Status st = Top(&index); !st.ok()) return st;
    if (nodes_[index].kind != kind) {
      return Fail(fmt::format("the value it adds to is a {} (created at byte offset {}), not a {}",
                              PickleValue::KindName(nodes_[index].kind), nodes_[index].offset,
                              PickleValue::KindName(kind)));
    }
    *target = &nodes_[index];
    return Status::Ok();
  }

  // APPEND (one value) and SETITEM (one key and value) into the container below them.
  Status AddOne() {
    const size_t n = op_ == op::kAppend ? 1 : 2;
    if (stack_.size() - Floor() < n + 1) return Fail(fmt::format("needs {} values on the stack", n + 1));
    std::vector<uint32_t> items(stack_.end() - static_cast<ptrdiff_t>(n), stack_.end());
    stack_.resize(stack_.size() - n);
    return AddTo(op_ == op::kAppend ? Kind::kList : Kind::kDict, items);
  }

  // APPENDS and SETITEMS: the items above the top MARK into the container below it.
  Status AddFromMark() {
    std::vector<uint32_t> items;
    if (Status st = PopToMark(&items); !st.ok()) return st;
    return AddTo(op_ == op::kAppends ? Kind::kList : Kind::kDict, items);
  }

  Status AddTo(Kind kind, const std::vector<uint32_t>& items) {
    if (kind == Kind::kDict) {
      if (Status st = CheckKeys(items); !st.ok()) return st;
    }
    PickleNode* target = nullptr;
    if (Status st = Target(kind, &target); !st.ok()) return st;
    if (Status st = Hold(items.size()); !st.ok()) return st;
    target->children.insert(target->children.end(), items.begin(), items.end());
    return Status::Ok();
  }

  // --- the memo, and what is refused ---------------------------------------------------------------------

  Status Put(uint64_t key) {
    uint32_t top = 0;
    if (Status st = Top(&top); !st.ok()) return st;
    if (key < memo_dense_.size()) {
      memo_dense_[key] = top;
      return Status::Ok();
    }
    if (key > memo_dense_.size()) {
      if (memo_sparse_.size() >= kMaxSparseMemo && memo_sparse_.count(key) == 0) {
        return Fail(fmt::format("more than {} memo ids stored out of sequence", kMaxSparseMemo));
      }
      memo_sparse_[key] = top;
      return Status::Ok();
    }
    if (memo_dense_.size() >= Cap()) {
      return Fail(fmt::format("more than {} memo ids (PickleLimits::max_items)", Cap()));
    }
    memo_dense_.push_back(top);
    // Ids stored ahead of sequence join the dense part once the gap before them is filled.
    for (auto it = memo_sparse_.find(memo_dense_.size()); it != memo_sparse_.end();
         it = memo_sparse_.find(memo_dense_.size())) {
      memo_dense_.push_back(it->second);
      memo_sparse_.erase(it);
    }
    return Status::Ok();
  }

  Status Get(uint64_t key) {
    if (key < memo_dense_.size()) return PushIndex(memo_dense_[key]);
    const auto it = memo_sparse_.find(key);
    if (it == memo_sparse_.end()) {
      return Fail(fmt::format("memo id {} was never stored (no PUT before this GET)", key));
    }
    return PushIndex(it->second);
  }

  Status TextMemo() {
    std::string_view line;
    if (Status st = ReadLine(&line); !st.ok()) return st;
    int64_t key = 0;
    if (!pickle_text::ParseDecimal(line, &key) || key < 0) {
      return Fail(fmt::format("'{}' is not a memo id (a non-negative decimal integer)", Printable(line)));
    }
    return op_ == op::kPut ? Put(static_cast<uint64_t>(key)) : Get(static_cast<uint64_t>(key));
  }

  Status BinMemo(size_t width) {
    uint64_t key = 0;
    if (Status st = ReadUnsigned(width, &key); !st.ok()) return st;
    return op_ == op::kBinPut || op_ == op::kLongBinPut ? Put(key) : Get(key);
  }

  Status Proto() {
    uint64_t version = 0;
    if (Status st = ReadUnsigned(1, &version); !st.ok()) return st;
    if (version > 5) return Fail(fmt::format("unsupported pickle protocol {} (0 to 5 are)", version));
    return Status::Ok();
  }

  // FRAME (protocol 4) announces how many bytes the next opcodes take: checked, then read through.
  Status Frame() {
    uint64_t n = 0;
    if (Status st = ReadUnsigned(8, &n); !st.ok()) return st;
    return Need(n, "the frame");
  }

  Status Refuse() {
    switch (op_) {
      case op::kGlobal:
      case op::kInst:
        return RefuseNamed();
      case op::kStackGlobal:
        return Fail("refused: it imports a Python object by name; strata never imports or runs pickle code");
      case op::kReduce:
        return Fail("refused: it calls a Python object; strata never runs pickle code");
      case op::kBuild:
        return Fail("refused: it sets an object's state (__setstate__); strata never runs pickle code");
      case op::kObj:
      case op::kNewObj:
      case op::kNewObjEx:
        return Fail("refused: it creates an instance of a class; strata never runs pickle code");
      case op::kPersId:
      case op::kBinPersId:
        return Fail("refused: a persistent id is resolved by the writer's own code; strata has none");
      case op::kExt1:
      case op::kExt2:
      case op::kExt4:
        return Fail("refused: it imports a class from Python's copyreg extension registry");
      case op::kNextBuffer:
      case op::kReadonlyBuffer:
        return Fail("refused: out-of-band buffers are not in the pickle's bytes");
      case op::kEmptySet:
      case op::kAddItems:
      case op::kFrozenSet:
        return Fail("unsupported: strata's pickle values have no sets");
      case op::kString:
        return Fail("unsupported: protocol 0's quoted STRING (a Python 2 str) is not read");
      default:
        return Fail("not a pickle opcode strata knows");
    }
  }

  // GLOBAL and INST carry "module\nname\n": named in the refusal, never looked up.
  Status RefuseNamed() {
    std::string_view module, name;
    if (ReadLine(&module).ok() && ReadLine(&name).ok()) {
      return Fail(fmt::format("refused: it imports {}.{}; strata never imports or runs pickle code", Printable(module),
                              Printable(name)));
    }
    return Fail("refused: it imports a Python object by name; strata never imports or runs pickle code");
  }

  std::string_view in_;
  const PickleLimits& limits_;
  size_t pos_ = 0;
  size_t op_start_ = 0;
  uint8_t op_ = 0;
  bool stopped_ = false;
  uint32_t root_ = 0;
  std::vector<PickleNode> nodes_;
  std::vector<uint32_t> stack_;
  std::vector<size_t> marks_;
  std::vector<uint32_t> memo_dense_;
  std::unordered_map<uint64_t, uint32_t> memo_sparse_;
  size_t held_ = 0;  // references held by containers
};

}  // namespace

Expected<PickleValue> ParsePickle(std::string_view bytes, const PickleLimits& limits) {
  if (bytes.size() > limits.max_input_bytes) {
    return Status::Resource(fmt::format("pickle: {} bytes, over the limit of {} (PickleLimits::max_input_bytes)",
                                        bytes.size(), limits.max_input_bytes));
  }
  if (bytes.empty()) return Status::BadInput("pickle: byte offset 0: the input is empty", ErrorPlace::AtOffset("", 0));
  return Machine(bytes, limits).Run();
}

}  // namespace strata
