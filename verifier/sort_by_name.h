// Stable sort of named entities (buffers, kernels, programs, ...) by name, bytewise.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace loadplan::verifier {

// Entities are large, so positions are sorted and each entity is moved once.
// Already sorted input (the common case: JSON objects arrive sorted) costs O(n).
template <typename T>
void SortByName(std::vector<T>& v) {
  auto less = [](const T& a, const T& b) { return a.name < b.name; };
  if (std::is_sorted(v.begin(), v.end(), less)) return;
  std::vector<size_t> order(v.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&v](size_t a, size_t b) { return v[a].name < v[b].name; });
  std::vector<T> sorted;
  sorted.reserve(v.size());
  for (size_t i : order) sorted.push_back(std::move(v[i]));
  v = std::move(sorted);
}

}  // namespace loadplan::verifier
