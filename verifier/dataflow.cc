// Derive-program dataflow: the lexicographically smallest topological order
// of derive programs over carries (Kahn's algorithm with a min-heap of names).
//
//   writer A --carry--> reader B   gives edge A -> B (self-edges ignored: within a
//   program, call order decides). Programs left over by Kahn lie on or behind a cycle;
//   walking predecessors from one of them must revisit a node, and that loop is the cycle.
#include "verifier/dataflow.h"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <set>

#include "verifier/usage.h"

namespace loadplan::verifier {
namespace {

using Graph = std::map<std::string, std::set<std::string>>;  // node -> successors

struct DeriveGraph {
  Graph succ;
  Graph pred;
};

DeriveGraph BuildGraph(const Manifest& m) {
  DeriveGraph g;
  for (const Program& p : m.programs) {
    if (p.derive && !p.malformed) {
      g.succ[p.name];
      g.pred[p.name];
    }
  }
  UsageIndex usage = BuildUsage(m);
  for (const auto& [buffer, uses] : usage.by_buffer) {
    const Buffer* b = m.FindBuffer(buffer);
    if (b == nullptr || b->kind != BufferKind::kCarry) continue;
    std::set<std::string> writers, readers;
    for (const Use& u : uses) {
      const Program& p = m.programs[u.program];
      if (!p.derive || u.param.empty()) continue;  // a derive collective is P3's error, not dataflow
      if (Writes(u.access)) writers.insert(p.name);
      if (Reads(u.access)) readers.insert(p.name);
    }
    for (const std::string& w : writers) {
      for (const std::string& r : readers) {
        if (w == r) continue;
        g.succ[w].insert(r);
        g.pred[r].insert(w);
      }
    }
  }
  return g;
}

// From a node left over by Kahn, follow the smallest remaining predecessor until a
// node repeats; the repeated stretch, reversed, is a cycle in edge direction.
std::vector<std::string> FindCycle(const DeriveGraph& g, const std::set<std::string>& left) {
  std::vector<std::string> walk;
  std::map<std::string, size_t> seen;
  std::string at = *left.begin();
  while (!seen.contains(at)) {
    seen[at] = walk.size();
    walk.push_back(at);
    for (const std::string& p : g.pred.at(at)) {
      if (left.contains(p)) {
        at = p;
        break;
      }
    }
  }
  std::vector<std::string> cycle(walk.begin() + static_cast<ptrdiff_t>(seen[at]), walk.end());
  std::reverse(cycle.begin(), cycle.end());
  auto first = std::min_element(cycle.begin(), cycle.end());
  std::rotate(cycle.begin(), first, cycle.end());
  cycle.push_back(cycle.front());
  return cycle;
}

}  // namespace

DeriveOrder OrderDerivePrograms(const Manifest& m) {
  DeriveGraph g = BuildGraph(m);
  std::map<std::string, size_t> indegree;
  std::priority_queue<std::string, std::vector<std::string>, std::greater<>> ready;
  for (const auto& [n, preds] : g.pred) {
    indegree[n] = preds.size();
    if (preds.empty()) ready.push(n);
  }
  DeriveOrder out;
  while (!ready.empty()) {
    std::string n = ready.top();
    ready.pop();
    out.order.push_back(n);
    for (const std::string& s : g.succ[n]) {
      if (--indegree[s] == 0) ready.push(s);
    }
  }
  if (out.order.size() < g.succ.size()) {
    std::set<std::string> left;
    for (const auto& [n, d] : indegree) {
      if (d > 0) left.insert(n);
    }
    out.cycle = FindCycle(g, left);
  }
  return out;
}

}  // namespace loadplan::verifier
