// Status: construction and context.
#include "base/status.h"

namespace loadplan::base {

std::string_view ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidInput: return "invalid input";
    case ErrorKind::kIo: return "I/O error";
    case ErrorKind::kOutOfMemory: return "out of memory";
    case ErrorKind::kDevice: return "device error";
    case ErrorKind::kCancelled: return "cancelled";
    case ErrorKind::kInternal: return "internal error";
    case ErrorKind::kOption: return "option";
  }
  return "error";
}

Status Status::Error(std::string message, ErrorKind kind) {
  Status s;
  s.ok_ = false;
  s.kind_ = kind;
  s.message_ = message.empty() ? std::string(ErrorKindName(kind)) : std::move(message);
  return s;
}

Status Status::WithMessage(std::string message) const {
  if (ok_) return *this;
  Status s = *this;
  s.message_ = std::move(message);
  return s;
}

Status Status::WithBytes(uint64_t requested, std::optional<uint64_t> free) const {
  if (ok_) return *this;
  Status s = *this;
  s.bytes_ = ErrorBytes{.requested = requested, .free = free};
  return s;
}

Status Status::WithFile(std::string path, int error_number) const {
  if (ok_) return *this;
  Status s = *this;
  s.file_ = ErrorFile{.path = std::move(path), .error_number = error_number};
  return s;
}

Status Status::WithPlace(std::string name, uint64_t offset) const {
  if (ok_) return *this;
  Status s = *this;
  s.place_ = ErrorPlace{.name = std::move(name), .offset = offset};
  return s;
}

Status Status::WithProblems(std::vector<std::string> problems) const {
  if (ok_) return *this;
  Status s = *this;
  s.problems_ = std::move(problems);
  return s;
}

Status Status::WithContext(std::string_view where) const {
  if (ok_) return *this;
  Status s = *this;
  s.message_ = std::string(where) + ": " + message_;
  return s;
}

}  // namespace loadplan::base
