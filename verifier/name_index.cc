// NameIndex: linear probing over a power-of-two table, at most half full.
#include "verifier/name_index.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <utility>

namespace loadplan::verifier {

NameIndex::NameIndex(std::vector<std::string_view> names) : count_(names.size()) {
  slots_.assign(std::bit_ceil(std::max<size_t>(16, 2 * names.size())), Slot{});
  const size_t mask = slots_.size() - 1;
  for (size_t i = 0; i < names.size(); ++i) {
    const size_t h = std::hash<std::string_view>{}(names[i]);
    for (size_t s = h & mask;; s = (s + 1) & mask) {
      Slot& slot = slots_[s];
      if (slot.position == 0) {
        slot = Slot{.hash = h, .name = names[i], .position = i + 1};
        break;
      }
      if (slot.hash == h && slot.name == names[i]) break;  // keep the first
    }
  }
}

std::optional<size_t> NameIndex::Find(std::string_view name) const {
  if (slots_.empty()) return std::nullopt;
  const size_t mask = slots_.size() - 1;
  const size_t h = std::hash<std::string_view>{}(name);
  for (size_t s = h & mask; slots_[s].position != 0; s = (s + 1) & mask) {
    if (slots_[s].hash == h && slots_[s].name == name) return slots_[s].position - 1;
  }
  return std::nullopt;
}

}  // namespace loadplan::verifier
