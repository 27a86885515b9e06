// Derive-program dataflow: the smallest topological order of derive programs over carries in
// natural name order (base::NaturalLess: l2 before l10, so a model's layers load in their own
// order), by Kahn's algorithm with a min-heap.
//
//   writer A --carry--> reader B   gives edge A -> B (self-edges ignored: within a
//   program, call order decides). Programs left over by Kahn lie on or behind a cycle;
//   walking predecessors from one of them must revisit a node, and that loop is the cycle.
//
// Nodes are numbered in natural name order, so comparing numbers compares names.
#include "verifier/derive_order.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <queue>
#include <string_view>

#include "base/natural_order.h"
#include "verifier/usage.h"

namespace loadplan::verifier {
namespace {

using Ids = std::vector<size_t>;

struct DeriveGraph {
  std::vector<std::string_view> names;         // node -> program name, sorted, unique
  std::vector<std::optional<size_t>> node_of;  // program index -> node (derive, well-formed)
  std::vector<Ids> succ, pred;                 // sorted, unique
};

void NumberNodes(const Manifest& m, DeriveGraph& g) {
  std::vector<std::pair<std::string_view, size_t>> derive;  // (name, program index)
  for (size_t i = 0; i < m.programs.size(); ++i) {
    if (m.programs[i].derive && !m.programs[i].malformed)
      derive.emplace_back(m.programs[i].name, i);
  }
  std::stable_sort(derive.begin(), derive.end(), [](const auto& a, const auto& b) {
    return base::NaturalLess(a.first, b.first);
  });
  g.node_of.assign(m.programs.size(), std::nullopt);
  for (const auto& [name, index] : derive) {
    if (g.names.empty() || g.names.back() != name) g.names.push_back(name);
    g.node_of[index] = g.names.size() - 1;
  }
  g.succ.assign(g.names.size(), {});
  g.pred.assign(g.names.size(), {});
}

// The buffers named by `usage`, in its (name) order: a merge with sorted buffers,
// else Manifest::FindBuffer.
template <typename F>
void ForEachUsedBuffer(const Manifest& m, const UsageIndex& usage, F&& f) {
  bool sorted = std::is_sorted(m.buffers.begin(), m.buffers.end(),
                               [](const Buffer& a, const Buffer& b) { return a.name < b.name; });
  auto next = m.buffers.begin();
  for (const auto& [name, uses] : usage.by_buffer) {
    const Buffer* b = nullptr;
    if (sorted) {
      while (next != m.buffers.end() && next->name < name) ++next;
      if (next != m.buffers.end() && next->name == name) b = &*next;
    } else {
      b = m.FindBuffer(name);
    }
    f(b, uses);
  }
}

void SortUnique(Ids& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

DeriveGraph BuildGraph(const Manifest& m, const UsageIndex& usage) {
  DeriveGraph g;
  NumberNodes(m, g);
  Ids writers, readers;
  ForEachUsedBuffer(m, usage, [&](const Buffer* b, const std::vector<Use>& uses) {
    if (b == nullptr || b->kind != BufferKind::kCarry) return;
    writers.clear();
    readers.clear();
    for (const Use& u : uses) {
      const std::optional<size_t> n = g.node_of[u.program];
      if (!n || u.param.empty()) continue;  // a derive collective is P3's error, not dataflow
      if (Writes(u.access)) writers.push_back(*n);
      if (Reads(u.access)) readers.push_back(*n);
    }
    SortUnique(writers);
    SortUnique(readers);
    for (size_t w : writers) {
      for (size_t r : readers) {
        if (w == r) continue;
        g.succ[w].push_back(r);
        g.pred[r].push_back(w);
      }
    }
  });
  for (Ids& s : g.succ) SortUnique(s);
  for (Ids& p : g.pred) SortUnique(p);
  return g;
}

// From a node left over by Kahn, follow the smallest remaining predecessor until a
// node repeats; the repeated stretch, reversed, is a cycle in edge direction.
std::vector<std::string> FindCycle(const DeriveGraph& g, const std::vector<bool>& left) {
  Ids walk;
  std::vector<std::optional<size_t>> seen(g.names.size());
  size_t at = static_cast<size_t>(std::find(left.begin(), left.end(), true) - left.begin());
  while (!seen[at]) {
    seen[at] = walk.size();
    walk.push_back(at);
    for (size_t p : g.pred[at]) {
      if (left[p]) {
        at = p;
        break;
      }
    }
  }
  Ids cycle(walk.begin() + static_cast<ptrdiff_t>(*seen[at]), walk.end());
  std::reverse(cycle.begin(), cycle.end());
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  cycle.push_back(cycle.front());
  std::vector<std::string> out;
  for (size_t n : cycle) out.emplace_back(g.names[n]);
  return out;
}

}  // namespace

DeriveOrder OrderDerivePrograms(const Manifest& m) { return OrderDerivePrograms(m, BuildUsage(m)); }

DeriveOrder OrderDerivePrograms(const Manifest& m, const UsageIndex& usage) {
  DeriveGraph g = BuildGraph(m, usage);
  std::vector<size_t> indegree(g.names.size());
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t n = 0; n < g.names.size(); ++n) {
    indegree[n] = g.pred[n].size();
    if (indegree[n] == 0) ready.push(n);
  }
  DeriveOrder out;
  out.order.reserve(g.names.size());
  while (!ready.empty()) {
    size_t n = ready.top();
    ready.pop();
    out.order.emplace_back(g.names[n]);
    for (size_t s : g.succ[n]) {
      if (--indegree[s] == 0) ready.push(s);
    }
  }
  if (out.order.size() < g.names.size()) {
    std::vector<bool> left(g.names.size());
    for (size_t n = 0; n < g.names.size(); ++n) left[n] = indegree[n] > 0;
    out.cycle = FindCycle(g, left);
  }
  return out;
}

}  // namespace loadplan::verifier
