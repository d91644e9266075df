// Status and Expected<T>: how errors cross module boundaries in the core (no exceptions).
// Invariant: an error always carries a message a user can act on (what failed and where: file, offset,
// argument), a kind callers can branch on, and, when the code that found it knew it, a structured place;
// an Expected holds exactly one of a value or an error; neither is dropped unread ([[nodiscard]]).
//
// The kinds (ErrorKind), and who uses them:
//   kBadInput    the input's data is malformed or invalid (bad JSON, a CSV record without its closing quote,
//                a truncated pickle or gzip stream, a damaged segment or SQLite file, inputs that contradict
//                each other). The user must fix or replace the input. CLI exit 5.
//   kNotATrace   the input is readable but is not a trace of any supported format (the job loader leaves such
//                files of a folder out rather than failing). CLI exit 6.
//   kUnsupported a valid input or option strata does not handle (a newer segment version, a compressed SQLite
//                file, an op table given beside profiler traces). CLI exit 6.
//   kResource    the environment failed: open/read/write/create errors, missing files, memory or size
//                limits, a server unreachable, a kernel refusing BPF. Retrying elsewhere may work. CLI exit 1.
//   kInternal    a broken invariant of strata itself (a bug to report). CLI exit 7.
//   kUsage       wrong arguments or options (the command line, a keyword of the Python module). CLI exit 2.
// The place (ErrorPlace): the file and, as the format allows, the byte offset (of the decompressed content)
// or the 1-based line/row where bad input was found. It is set by the parsers that know it: the JSON event
// splitter (Kineto), the CSV reader (op tables), the gzip byte source, the segment reader, the pickle reader
// and Flight Recorder decoder, the nsys SQLite reader. The message already names the place in its text; the
// structured copy is for callers (tests, the Python module, tools) that must not parse messages.
// Cost: an ok Status is one null pointer; an error is one shared allocation (errors are rare).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace strata {

/// What kind of error a Status is, where callers must tell them apart (see the file comment).
enum class ErrorKind {
  kBadInput,
  kNotATrace,
  kUnsupported,
  kResource,
  kInternal,
  kUsage,
};

/// The kind's name in lower case with underscores ("bad_input", "not_a_trace", ...), for tools and tests.
inline const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kBadInput:
      return "bad_input";
    case ErrorKind::kNotATrace:
      return "not_a_trace";
    case ErrorKind::kUnsupported:
      return "unsupported";
    case ErrorKind::kResource:
      return "resource";
    case ErrorKind::kInternal:
      return "internal";
    case ErrorKind::kUsage:
      return "usage";
  }
  return "internal";
}

/// Where an error was found: the file (as the user named it) and, when known, a byte offset into its
/// content or a 1-based line/row. The offset is into the bytes the parser read: the decompressed text of JSON, CSV
/// and pickle, the file's own bytes for gzip, segment and SQLite errors. The file is empty only while a parser
/// of bytes without a name (the pickle reader) returns; its caller names it (Status::InFile).
struct ErrorPlace {
  std::string file;
  std::optional<uint64_t> offset;
  std::optional<uint64_t> line;

  static ErrorPlace AtOffset(std::string in, uint64_t at) { return {std::move(in), at, std::nullopt}; }
  static ErrorPlace AtLine(std::string in, uint64_t at) { return {std::move(in), std::nullopt, at}; }
};

/// Outcome of an operation without a value: ok, or an error with a user-facing message, a kind and maybe a
/// place. [[nodiscard]]: a result is handled or, where ignoring it is right, dropped with `(void)` and a comment
/// saying why. Copies share the error's one allocation (it is immutable).
class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  // (Overloads rather than a defaulted std::optional<ErrorPlace>: g++ 12 -O3 warns, wrongly, that a moved empty
  // optional's string may be uninitialized.)
  static Status Error(std::string message, ErrorKind kind) {
    return Status(std::make_shared<Detail>(std::move(message), kind));
  }
  static Status Error(std::string message, ErrorKind kind, ErrorPlace place) {
    return Status(std::make_shared<Detail>(std::move(message), kind, std::move(place)));
  }
  static Status BadInput(std::string message) { return Error(std::move(message), ErrorKind::kBadInput); }
  static Status BadInput(std::string message, ErrorPlace place) {
    return Error(std::move(message), ErrorKind::kBadInput, std::move(place));
  }
  static Status NotATrace(std::string message) { return Error(std::move(message), ErrorKind::kNotATrace); }
  static Status NotATrace(std::string message, ErrorPlace place) {
    return Error(std::move(message), ErrorKind::kNotATrace, std::move(place));
  }
  static Status Unsupported(std::string message) { return Error(std::move(message), ErrorKind::kUnsupported); }
  static Status Resource(std::string message) { return Error(std::move(message), ErrorKind::kResource); }
  static Status Internal(std::string message) { return Error(std::move(message), ErrorKind::kInternal); }
  static Status Usage(std::string message) { return Error(std::move(message), ErrorKind::kUsage); }

  bool ok() const { return detail_ == nullptr; }
  /// The kind of an error (kInternal for an ok Status: asking is a bug).
  ErrorKind kind() const { return detail_ ? detail_->kind : ErrorKind::kInternal; }
  const std::string& message() const {
    static const std::string kEmpty;
    return detail_ ? detail_->message : kEmpty;
  }
  /// Where the error was found, or nullptr when the code that found it did not know.
  const ErrorPlace* where() const { return detail_ && detail_->where ? &*detail_->where : nullptr; }

  /// The same error (kind and place) told with another message, e.g. with a prefix naming the option.
  Status Reworded(std::string message) const {
    if (ok()) return *this;
    return Placed(std::move(message), detail_->kind);
  }
  /// The same error placed in `file` (kept when it already names one): for parsers of bytes that do not know
  /// the file's name (the pickle reader), whose caller does.
  Status InFile(const std::string& file) const {
    if (ok()) return *this;
    ErrorPlace place = detail_->where ? *detail_->where : ErrorPlace{file, std::nullopt, std::nullopt};
    if (place.file.empty()) place.file = file;
    return Error(detail_->message, detail_->kind, std::move(place));
  }
  /// The same error of another kind (e.g. a parse error of an option's value is a usage error).
  Status AsKind(ErrorKind other) const {
    if (ok()) return *this;
    return Placed(detail_->message, other);
  }

 private:
  struct Detail {
    Detail(std::string m, ErrorKind k) : message(std::move(m)), kind(k) {}
    Detail(std::string m, ErrorKind k, ErrorPlace p) : message(std::move(m)), kind(k), where(std::move(p)) {}
    std::string message;
    ErrorKind kind;
    std::optional<ErrorPlace> where;
  };
  // An error of `message` and `kind` at this error's place, if it has one (this is not ok).
  Status Placed(std::string message, ErrorKind kind) const {
    if (detail_->where) return Error(std::move(message), kind, *detail_->where);
    return Error(std::move(message), kind);
  }
  explicit Status(std::shared_ptr<const Detail> detail) : detail_(std::move(detail)) {}
  std::shared_ptr<const Detail> detail_;
};

/// A value of type T, or the Status explaining why there is none ([[nodiscard]] as Status).
template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}       // NOLINT(google-explicit-constructor)
  Expected(Status error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(state_); }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(state_);
  }
  const std::string& error() const { return status().message(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace strata
