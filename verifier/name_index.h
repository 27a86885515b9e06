// Internal to the verifier: an open-addressing hash from a name to the first
// position holding it in a name-keyed sequence. Large manifests look names up
// hundreds of thousands of times; this costs one probe where a binary search
// touches log n scattered names.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace loadplan::verifier {

class NameIndex {
 public:
  NameIndex() = default;
  // Indexes names[i] at i; a repeated name keeps its first position.
  explicit NameIndex(std::vector<std::string_view> names);

  [[nodiscard]] std::optional<size_t> Find(std::string_view name) const;
  [[nodiscard]] bool empty() const { return count_ == 0; }

 private:
  // One table entry: the name's hash and text (compared only on a hash match) and
  // its position + 1 (0: an empty slot). Probing touches one entry per step.
  struct Slot {
    size_t hash = 0;
    std::string_view name;
    size_t position = 0;
  };
  std::vector<Slot> slots_;
  size_t count_ = 0;
};

// Index of v[i].name at i.
template <typename T>
NameIndex IndexByName(const std::vector<T>& v) {
  std::vector<std::string_view> names;
  names.reserve(v.size());
  for (const T& x : v) names.emplace_back(x.name);
  return NameIndex(std::move(names));
}

// True when v is sorted by name (what the binary-search lookups of Manifest assume).
template <typename T>
bool SortedByName(const std::vector<T>& v) {
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i].name < v[i - 1].name) return false;
  }
  return true;
}

}  // namespace loadplan::verifier
