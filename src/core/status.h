// Status and Expected<T>: how errors cross module boundaries in the core (no exceptions).
// Invariant: an error always carries a message a user can act on (what failed and where: file, offset,
// argument); an Expected holds exactly one of a value or an error; neither is dropped unread ([[nodiscard]]).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace strata {

/// What kind of error a Status is, where callers must tell them apart.
enum class ErrorKind {
  kGeneric,
  kNotATrace,  // the input is readable but is not a trace of any supported format
};

/// Outcome of an operation without a value: ok, or an error with a user-facing message. [[nodiscard]]: a
/// result is handled or, where ignoring it is right, dropped with `(void)` and a comment saying why.
class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status Error(std::string message, ErrorKind kind = ErrorKind::kGeneric) {
    Status s(std::move(message));
    s.kind_ = kind;
    return s;
  }

  bool ok() const { return !message_.has_value(); }
  ErrorKind kind() const { return kind_; }
  const std::string& message() const {
    static const std::string kEmpty;
    return message_ ? *message_ : kEmpty;
  }

 private:
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::optional<std::string> message_;
  ErrorKind kind_ = ErrorKind::kGeneric;
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
