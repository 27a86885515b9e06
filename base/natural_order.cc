// NaturalLess: a merge over the two names, digit runs compared by value.
#include "base/natural_order.h"

namespace loadplan::base {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The digit run at `at` without its leading zeros; `at` moves past the run.
std::string_view DigitRun(std::string_view s, size_t& at) {
  const size_t start = at;
  while (at < s.size() && IsDigit(s[at])) ++at;
  std::string_view run = s.substr(start, at - start);
  while (run.size() > 1 && run.front() == '0') run.remove_prefix(1);
  return run;
}

// <0, 0, >0 as `a` reads before, with or after `b`.
int CompareByValue(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (IsDigit(a[i]) && IsDigit(b[j])) {
      const std::string_view x = DigitRun(a, i), y = DigitRun(b, j);
      if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
      if (const int c = x.compare(y); c != 0) return c;
      continue;
    }
    if (a[i] != b[j])
      return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]) ? -1 : 1;
    ++i;
    ++j;
  }
  if (i < a.size()) return 1;
  if (j < b.size()) return -1;
  return 0;
}

}  // namespace

bool NaturalLess(std::string_view a, std::string_view b) {
  const int c = CompareByValue(a, b);
  return c != 0 ? c < 0 : a < b;
}

}  // namespace loadplan::base
