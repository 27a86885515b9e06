// Ctrl-C for `loadplan run`: while an InterruptWatch lives, the first SIGINT asks the load to
// stop (its token, api::LoadOptions::stop: the load ends with kCancelled, everything freed,
// exit 130); the handler then is the default again, so a second Ctrl-C kills at once.
//
// The handler only write(2)s a byte to a self-pipe (async-signal-safe); a watcher thread reads
// it and calls request_stop, which is not. SA_RESTART keeps the I/O threads' reads going.
#pragma once

#include <signal.h>

#include <atomic>
#include <stop_token>
#include <thread>

namespace loadplan::cli {

class InterruptWatch {
 public:
  InterruptWatch();   // installs the handler and starts the watcher
  ~InterruptWatch();  // restores the previous handler, joins the watcher
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;

  [[nodiscard]] std::stop_token token() const { return stop_.get_token(); }
  [[nodiscard]] bool interrupted() const { return stop_.stop_requested(); }

 private:
  std::stop_source stop_;
  int pipe_[2] = {-1, -1};
  struct sigaction previous_ {};
  bool installed_ = false;
  std::thread watcher_;
};

}  // namespace loadplan::cli
