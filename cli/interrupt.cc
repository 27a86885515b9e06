// InterruptWatch: SIGINT -> self-pipe -> watcher thread -> std::stop_source::request_stop.
#include "cli/interrupt.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace loadplan::cli {
namespace {

// One watch at a time (the handler cannot carry state); -1 when none.
std::atomic<int> g_write_end{-1};

constexpr char kInterrupt = 'i';
constexpr char kQuit = 'q';

void OnInterrupt(int) {
  const int saved = errno;  // write may set it; the interrupted code must not see a change
  const int fd = g_write_end.load();
  if (fd >= 0) {
    const char c = kInterrupt;
    [[maybe_unused]] const ssize_t n = ::write(fd, &c, 1);
  }
  errno = saved;
}

}  // namespace

InterruptWatch::InterruptWatch() {
  if (::pipe2(pipe_, O_CLOEXEC) != 0) return;  // no watch: Ctrl-C keeps its default (kill)
  g_write_end.store(pipe_[1]);
  struct sigaction sa {};
  sa.sa_handler = &OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART | SA_RESETHAND;  // the second Ctrl-C gets the default: it kills
  installed_ = ::sigaction(SIGINT, &sa, &previous_) == 0;
  watcher_ = std::thread([this] {
    char c = 0;
    for (;;) {
      const ssize_t n = ::read(pipe_[0], &c, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || c == kQuit) return;
      stop_.request_stop();
    }
  });
}

InterruptWatch::~InterruptWatch() {
  if (installed_) ::sigaction(SIGINT, &previous_, nullptr);
  g_write_end.store(-1);
  if (watcher_.joinable()) {
    const char c = kQuit;
    while (::write(pipe_[1], &c, 1) < 0 && errno == EINTR) {}
    watcher_.join();
  }
  for (int fd : pipe_) {
    if (fd >= 0) ::close(fd);
  }
}

}  // namespace loadplan::cli
