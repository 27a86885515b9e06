// One result type for every library: ok, or an error that says what, where and how much
// ("cudaMalloc of 1.10 GiB for the staging arena failed: 0.42 GiB free of 139.80 GiB").
// No exception crosses a library boundary: operational failures travel as these values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace loadplan::base {

// What kind of failure, so a caller can choose an exit code or an exception class without
// parsing the message. Problems in a manifest are diagnostics (verifier/diag.h), not these.
enum class ErrorKind : uint8_t {
  kInvalidInput,  // an argument, option, checkpoint or plan the callee cannot use
  kIo,            // a file that cannot be opened, read or written
  kOutOfMemory,   // an allocation refused (device or host), with bytes asked and free
  kDevice,        // a CUDA error other than out of memory
  kCancelled,     // the caller asked to stop
  kInternal,      // an invariant an independent checker caught: a bug, not the caller's fault
  kOption,        // an option outside its accepted values: the caller's usage (CLI exit 2,
                  // Python OptionError), the same bounds from every front end
};

std::string_view ErrorKindName(ErrorKind kind);

// The figures an out-of-memory error carries beside its message, so a caller reads them rather
// than parsing English (Python's OutOfMemoryError.requested / .free): the bytes asked and, when
// the callee knew them, the bytes free then.
struct ErrorBytes {
  uint64_t requested = 0;
  std::optional<uint64_t> free;
  bool operator==(const ErrorBytes&) const = default;
};

// The file an error is about and the system's error number (errno) that refused it, so a
// caller maps "no such file" to its own type (Python's FileNotFoundError) without reading the
// message. error_number is 0 when the refusal was loadplan's own (not a regular file).
struct ErrorFile {
  std::string path;
  int error_number = 0;
  bool operator==(const ErrorFile&) const = default;
};

// Where in an input the error is: the named thing (a checkpoint tensor; empty for an
// expression's own text) and the byte offset in it (a read fault's offset in the tensor's data,
// a parse error's column), so a caller reports or retries it without reading the message.
struct ErrorPlace {
  std::string name;
  uint64_t offset = 0;
  bool operator==(const ErrorPlace&) const = default;
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  static Status Ok() { return {}; }
  static Status Error(std::string message, ErrorKind kind = ErrorKind::kInvalidInput);

  [[nodiscard]] bool ok() const { return ok_; }
  [[nodiscard]] const std::string& message() const { return message_; }  // empty when ok
  [[nodiscard]] ErrorKind kind() const { return kind_; }
  // The same error with "where: " in front of its message (ok stays ok; its bytes and file
  // kept).
  [[nodiscard]] Status WithContext(std::string_view where) const;
  // The same error (kind, bytes, file) with another message: a caller that re-words an error keeps
  // its figures (ok stays ok).
  [[nodiscard]] Status WithMessage(std::string message) const;
  // The same error carrying the bytes asked and free (ok stays ok).
  [[nodiscard]] Status WithBytes(uint64_t requested, std::optional<uint64_t> free) const;
  [[nodiscard]] const std::optional<ErrorBytes>& bytes() const { return bytes_; }
  // The same error carrying the file it is about and the errno (ok stays ok).
  [[nodiscard]] Status WithFile(std::string path, int error_number) const;
  [[nodiscard]] const std::optional<ErrorFile>& file() const { return file_; }
  // The same error carrying where in its input it is (ok stays ok).
  [[nodiscard]] Status WithPlace(std::string name, uint64_t offset) const;
  [[nodiscard]] const std::optional<ErrorPlace>& place() const { return place_; }
  // The same error carrying the problems an all-at-once check found, one entry each, in order
  // (status_lines.h: StatusFromLines sets them; ok stays ok).
  [[nodiscard]] Status WithProblems(std::vector<std::string> problems) const;
  [[nodiscard]] const std::vector<std::string>& problems() const { return problems_; }
  bool operator==(const Status&) const = default;

 private:
  bool ok_ = true;
  ErrorKind kind_ = ErrorKind::kInvalidInput;
  std::string message_;
  std::optional<ErrorBytes> bytes_;
  std::optional<ErrorFile> file_;
  std::optional<ErrorPlace> place_;
  std::vector<std::string> problems_;
};

// A value, or the Status that says why there is none. A Result built from an ok Status is an
// internal error (there is no value to hand out), never an empty success.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}       // NOLINT: implicit, like absl::StatusOr
  Result(Status error) : status_(std::move(error)) {  // NOLINT
    if (status_.ok())
      status_ = Status::Error("Result made from an ok Status", ErrorKind::kInternal);
  }

  [[nodiscard]] bool ok() const { return value_.has_value(); }
  [[nodiscard]] const Status& status() const { return status_; }  // ok when a value is held
  // Precondition: ok().
  [[nodiscard]] T& value() & { return *value_; }
  [[nodiscard]] const T& value() const& { return *value_; }
  [[nodiscard]] T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace loadplan::base
