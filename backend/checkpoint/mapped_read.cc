// FileMapping: map a file once; per gather copy the runs under a SIGBUS guard (mapped_read.h).
#include "backend/checkpoint/mapped_read.h"

#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "backend/checkpoint/read_errors.h"

namespace loadplan::backend {
namespace {

// The copy a thread is running under the guard: its mapping and where to jump back to.
struct Guard {
  const char* begin = nullptr;
  const char* end = nullptr;
  sigjmp_buf back;
};

thread_local Guard* t_guard = nullptr;
struct sigaction g_previous {};

void OnSigbus(int sig, siginfo_t* info, void* context) {
  Guard* g = t_guard;
  const char* at = static_cast<const char*>(info->si_addr);
  if (g != nullptr && at >= g->begin && at < g->end) siglongjmp(g->back, 1);
  // Not a guarded copy's: the handler that was there before takes it. The faulting access
  // runs again on return and raises the signal under that disposition.
  if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction != nullptr) {
    g_previous.sa_sigaction(sig, info, context);
    return;
  }
  ::sigaction(SIGBUS, &g_previous, nullptr);
}

void InstallOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction a {};
    a.sa_sigaction = OnSigbus;
    a.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&a.sa_mask);
    ::sigaction(SIGBUS, &a, &g_previous);
  });
}

struct Copy {
  const char* base;
  const MappedRuns* r;
  uint8_t* out;
};

void CopyRuns(void* arg) {
  const Copy& c = *static_cast<const Copy*>(arg);
  for (uint64_t i = 0; i < c.r->count; ++i)
    std::memcpy(c.out + i * c.r->run_bytes, c.base + i * c.r->stride, c.r->run_bytes);
}

// The seam's fault for this gather (one read call), or OK.
base::Status InjectedFault(const FileRef& file, const MappedRuns& r, const ReadContext& context) {
  if (context.faults == nullptr || !context.faults->faults().any()) return base::Status::Ok();
  const IoFaults& f = context.faults->faults();
  const uint64_t k = context.faults->NextRead();
  if (f.eio_at_read && *f.eio_at_read == k) {
    return ReadFailure(
        file, context, 0,
        fmt::format("{}: read failed: {}", Where(file, context, 0, r.offset), std::strerror(EIO)),
        EIO);
  }
  if (f.eof_at_read && k >= *f.eof_at_read)
    return Ended(file, context, 0, r.count * r.run_bytes, r.offset);
  return base::Status::Ok();
}

}  // namespace

bool GuardedCopy(const void* begin, const void* end, void (*copy)(void*), void* arg) {
  InstallOnce();
  Guard g{.begin = static_cast<const char*>(begin), .end = static_cast<const char*>(end)};
  // savemask 1: the jump back restores the signal mask the handler ran under.
  if (sigsetjmp(g.back, 1) != 0) {
    t_guard = nullptr;
    return false;
  }
  t_guard = &g;
  copy(arg);
  t_guard = nullptr;
  return true;
}

namespace {

// Whether `file` still holds its bytes up to `end` (its size now).
bool Holds(const FileRef& file, uint64_t end) {
  struct stat st {};
  return ::fstat(file.fd, &st) == 0 && static_cast<uint64_t>(st.st_size) >= end;
}

// Why a guarded copy stopped: the file is now shorter than the runs' span (it was cut: the
// pread's "the file ended"), or it still holds them and a page could not be read (EIO).
base::Status Interrupted(const FileRef& file, const MappedRuns& r, uint64_t span,
                         const ReadContext& context) {
  if (!Holds(file, r.offset + span)) return Ended(file, context, 0, span, r.offset);
  return ReadFailure(
      file, context, 0,
      fmt::format("{}: reading its mapped pages failed (SIGBUS with the file whole): {}",
                  Where(file, context, 0, r.offset), std::strerror(EIO)),
      EIO);
}

base::Status MapFailed(const FileRef& file, const ReadContext& context, uint64_t offset,
                       uint64_t length) {
  const int e = errno;
  return ReadFailure(file, context, 0,
                     fmt::format("{}: mapping {} bytes failed: {}", Where(file, context, 0, offset),
                                 length, std::strerror(e)),
                     e);
}

}  // namespace

base::Result<std::unique_ptr<FileMapping>> FileMapping::Map(const FileRef& file) {
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) return MapFailed(file, {}, 0, 0);
  const auto bytes = static_cast<uint64_t>(st.st_size);
  if (bytes == 0) return std::unique_ptr<FileMapping>(new FileMapping(nullptr, 0));
  void* map = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, file.fd, 0);
  if (map == MAP_FAILED) return MapFailed(file, {}, 0, bytes);
  return std::unique_ptr<FileMapping>(new FileMapping(static_cast<const char*>(map), bytes));
}

FileMapping::~FileMapping() {
  if (base_ != nullptr) ::munmap(const_cast<char*>(base_), bytes_);
}

base::Status FileMapping::Gather(const FileRef& file, const MappedRuns& r, uint8_t* out,
                                 const ReadContext& context) const {
  if (r.count == 0 || r.run_bytes == 0) return base::Status::Ok();
  if (base::Status st = InjectedFault(file, r, context); !st.ok()) return st;
  const uint64_t span = (r.count - 1) * r.stride + r.run_bytes;
  // The size now, not at mapping: bytes past a cut end, in its last page, would read as zeros.
  if (r.offset + span > bytes_ || !Holds(file, r.offset + span))
    return Ended(file, context, 0, span, r.offset);
  // The pages fault in as the copy touches them (each fault maps the cached pages around it).
  // The guard from the first run's page: a machine-check SIGBUS reports its page's address.
  static const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  Copy copy{.base = base_ + r.offset, .r = &r, .out = out};
  if (!GuardedCopy(base_ + r.offset / page * page, base_ + r.offset + span, CopyRuns, &copy))
    return Interrupted(file, r, span, context);
  return base::Status::Ok();
}

}  // namespace loadplan::backend
