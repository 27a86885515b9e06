// Access names (the manifest's spelling).
#include "base/access.h"

#include <array>

namespace loadplan::base {
namespace {

constexpr std::array<std::string_view, 4> kAccessNames = {"read", "write", "readwrite", "scalar"};

}  // namespace

std::optional<Access> ParseAccess(std::string_view s) {
  for (size_t i = 0; i < kAccessNames.size(); ++i) {
    if (kAccessNames[i] == s) return static_cast<Access>(i);
  }
  return std::nullopt;
}

std::string_view AccessName(Access a) {
  const size_t i = static_cast<size_t>(a);
  return i < kAccessNames.size() ? kAccessNames[i] : std::string_view("?");
}

}  // namespace loadplan::base
