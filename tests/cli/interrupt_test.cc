// InterruptWatch: a SIGINT requests the stop (through the self-pipe and the watcher thread),
// the second SIGINT would get the default action, and the previous handler comes back.
#include "cli/interrupt.h"

#include <signal.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace loadplan::cli {
namespace {

volatile sig_atomic_t g_previous_ran = 0;
void Previous(int) { g_previous_ran = 1; }

struct sigaction Current() {
  struct sigaction now {};
  ::sigaction(SIGINT, nullptr, &now);
  return now;
}

bool StopsWithin(const InterruptWatch& w, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!w.interrupted() && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return w.interrupted();
}

TEST(InterruptWatchTest, TheFirstSigintStopsThenTheDefaultIsBackUntilTheWatchEnds) {
  struct sigaction mine {};
  mine.sa_handler = &Previous;
  sigemptyset(&mine.sa_mask);
  ASSERT_EQ(::sigaction(SIGINT, &mine, nullptr), 0);
  {
    const InterruptWatch watch;
    const std::stop_token token = watch.token();
    EXPECT_FALSE(token.stop_requested());
    EXPECT_NE(Current().sa_handler, &Previous);
    ASSERT_EQ(::raise(SIGINT), 0);
    EXPECT_TRUE(StopsWithin(watch, std::chrono::seconds(5)));
    EXPECT_TRUE(token.stop_requested());
    EXPECT_EQ(Current().sa_handler, SIG_DFL);  // a second Ctrl-C kills
  }
  EXPECT_EQ(Current().sa_handler, &Previous);
  ASSERT_EQ(::raise(SIGINT), 0);
  EXPECT_EQ(g_previous_ran, 1);
  ::signal(SIGINT, SIG_DFL);
}

TEST(InterruptWatchTest, NoSigintNoStopAndTheWatcherJoins) {
  for (int i = 0; i < 20; ++i) {
    const InterruptWatch watch;
    EXPECT_FALSE(watch.interrupted());
  }
}

}  // namespace
}  // namespace loadplan::cli
