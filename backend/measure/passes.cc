// Threads at once and the median of passes (passes.h).
#include "backend/measure/passes.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace loadplan::backend {

base::Status OnThreads(uint32_t threads, const std::function<base::Status(uint32_t)>& work) {
  std::vector<base::Status> status(threads, base::Status::Ok());
  {
    std::vector<std::jthread> pool;
    pool.reserve(threads);
    for (uint32_t t = 0; t < threads; ++t) pool.emplace_back([&, t] { status[t] = work(t); });
  }
  for (base::Status& st : status) {
    if (!st.ok()) return st;
  }
  return base::Status::Ok();
}

base::Result<double> MedianOfThree(const std::function<base::Result<double>()>& pass) {
  std::vector<double> t;
  for (int r = 0; r < 4; ++r) {
    base::Result<double> s = pass();
    if (!s.ok()) return s.status();
    if (r > 0) t.push_back(*s);
  }
  std::sort(t.begin(), t.end());
  return t[1];
}

}  // namespace loadplan::backend
