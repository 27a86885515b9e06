// Progress bar: bytes done / total, rate in GB/s, redrawn in place on a terminal.
#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace loadplan::cli {

ProgressBar::ProgressBar(std::string label)
    : label_(std::move(label)),
      tty_(::isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

void ProgressBar::Update(uint64_t done, uint64_t total) {
  const auto now = std::chrono::steady_clock::now();
  const bool final = done >= total;
  if (!final && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  if (!tty_ && !final) return;
  const double frac = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const double secs = std::chrono::duration<double>(now - start_).count();
  const int width = 30, filled = static_cast<int>(frac * width);
  const std::string bar = std::string(filled, '#') + std::string(width - filled, '.');
  std::fputs(
      fmt::format("\r{} [{}] {:5.1f}% {:.2f}/{:.2f} GB {:.2f} GB/s{}", label_, bar, 100 * frac,
                  done / 1e9, total / 1e9, secs > 0 ? done / 1e9 / secs : 0.0, final ? "\n" : "")
          .c_str(),
      stderr);
}

}  // namespace loadplan::cli
