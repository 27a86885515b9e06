// OrderDerivePrograms: producer before consumer, the lexicographically smallest
// such order, and a real cycle when there is none.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "verifier/derive_order.h"

namespace loadplan::verifier {
namespace {

// A derive program as the carries it copies: {src, dst} per call.
struct Spec {
  std::string name;
  std::vector<std::pair<std::string, std::string>> copies;
  bool derive = true;
};

Call Copy(const std::string& src, const std::string& dst) {
  return Call{.type = CallType::kKernel,
              .kernel = "copy",
              .args = {Arg{.param = "dst", .buffer = dst}, Arg{.param = "src", .buffer = src}}};
}

// Every buffer named is a 1-element carry, except "s" (a source).
Manifest Make(const std::vector<Spec>& specs) {
  Manifest m;
  std::set<std::string> buffers{"s"};
  Kernel k{.name = "copy"};
  k.params = {Param{.name = "dst",
                    .access = Access::kWrite,
                    .dtype = base::Dtype::kU8,
                    .extent = Expr::Const(1)},
              Param{.name = "src",
                    .access = Access::kRead,
                    .dtype = base::Dtype::kU8,
                    .extent = Expr::Const(1)}};
  m.kernels.push_back(k);
  for (const Spec& s : specs) {
    Program p{.name = s.name, .derive = s.derive};
    for (const auto& [src, dst] : s.copies) {
      p.calls.push_back(Copy(src, dst));
      buffers.insert(src);
      buffers.insert(dst);
    }
    m.programs.push_back(p);
  }
  for (const std::string& b : buffers) {
    m.buffers.push_back(Buffer{.name = b,
                               .kind = b == "s" ? BufferKind::kSource : BufferKind::kCarry,
                               .shape = {Expr::Const(1)}});
  }
  AssignPointers(m);
  return m;
}

using Strings = std::vector<std::string>;

TEST(OrderDerivePrograms, DiamondRunsProducersFirstAndBreaksTiesByName) {
  // z.top -> {b.left, a.right} -> c.bottom
  Manifest m = Make({{"z.top", {{"s", "c1"}}},
                     {"b.left", {{"c1", "c2"}}},
                     {"a.right", {{"c1", "c3"}}},
                     {"c.bottom", {{"c2", "c4"}, {"c3", "c5"}}}});
  DeriveOrder o = OrderDerivePrograms(m);
  EXPECT_EQ(o.order, (Strings{"z.top", "a.right", "b.left", "c.bottom"}));
  EXPECT_TRUE(o.cycle.empty());
}

TEST(OrderDerivePrograms, IndependentProgramsRunInNameOrder) {
  Manifest m = Make({{"b", {{"s", "c1"}}}, {"c", {{"s", "c2"}}}, {"a", {{"s", "c3"}}}});
  EXPECT_EQ(OrderDerivePrograms(m).order, (Strings{"a", "b", "c"}));
}

TEST(OrderDerivePrograms, ProducerBeatsName) {
  Manifest m = Make({{"a", {{"c", "d"}}}, {"b", {{"s", "c"}}}});
  EXPECT_EQ(OrderDerivePrograms(m).order, (Strings{"b", "a"}));
}

TEST(OrderDerivePrograms, IgnoresSelfEdgesServingAndMalformedPrograms) {
  Manifest m = Make(
      {{"a", {{"s", "c"}, {"c", "d"}}}, {"serve", {{"d", "c"}}, false}, {"broken", {{"d", "c"}}}});
  for (Program& p : m.programs) p.malformed = p.name == "broken";
  DeriveOrder o = OrderDerivePrograms(m);
  EXPECT_EQ(o.order, (Strings{"a"}));
  EXPECT_TRUE(o.cycle.empty());
}

TEST(OrderDerivePrograms, CycleStartsAtItsSmallestNameAndClosesOnIt) {
  // c -> b -> a... as edges: b writes x read by c; c writes y read by a; a writes z read by b.
  Manifest m = Make({{"a", {{"y", "z"}}},
                     {"b", {{"z", "x"}}},
                     {"c", {{"x", "y"}}},
                     {"d.down", {{"y", "w"}}},
                     {"e.free", {{"s", "v"}}}});
  DeriveOrder o = OrderDerivePrograms(m);
  EXPECT_EQ(o.cycle, (Strings{"a", "b", "c", "a"}));
  EXPECT_EQ(o.order, (Strings{"e.free"}));
}

TEST(OrderDerivePrograms, CycleFoundFromADownstreamProgram) {
  // "a.down" sorts first but only reads from the x <-> y cycle.
  Manifest m = Make({{"a.down", {{"p", "q"}}}, {"x", {{"p", "r"}}}, {"y", {{"r", "p"}}}});
  DeriveOrder o = OrderDerivePrograms(m);
  EXPECT_EQ(o.cycle, (Strings{"x", "y", "x"}));
  EXPECT_TRUE(o.order.empty());
}

// The edges of a random program graph: program i copies carry "c<j>" into "c<i>" for each edge j ->
// i.
Manifest FromEdges(int n, const std::vector<std::pair<int, int>>& edges) {
  std::vector<Spec> specs;
  for (int i = 0; i < n; ++i) {
    Spec s{.name = std::string(1, static_cast<char>('a' + i)),
           .copies = {{"s", "c" + std::to_string(i)}}};
    for (const auto& [from, to] : edges) {
      if (to == i && from != i)
        s.copies.push_back({"c" + std::to_string(from), "o" + std::to_string(i)});
    }
    specs.push_back(s);
  }
  return Make(specs);
}

bool Topological(const Strings& order, const std::vector<std::pair<int, int>>& edges) {
  std::map<std::string, size_t> pos;
  for (size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  for (const auto& [from, to] : edges) {
    if (from == to) continue;
    std::string f(1, static_cast<char>('a' + from)), t(1, static_cast<char>('a' + to));
    if (pos.at(f) > pos.at(t)) return false;
  }
  return true;
}

RC_GTEST_PROP(OrderDerivePrograms, DagOrderIsTheSmallestTopologicalOrder, ()) {
  const int n = *rc::gen::inRange(1, 7);
  auto edge = rc::gen::apply(
      [](int a, int b) {
        return std::pair{std::min(a, b), std::max(a, b)};
      },
      rc::gen::inRange(0, n), rc::gen::inRange(0, n));
  // Edges i -> j with i < j over a shuffled naming: acyclic by construction.
  const auto raw = *rc::gen::container<std::vector<std::pair<int, int>>>(edge);
  std::vector<int> names(static_cast<size_t>(n));  // a random naming (Fisher-Yates)
  for (int i = 0; i < n; ++i) names[static_cast<size_t>(i)] = i;
  for (int i = n - 1; i > 0; --i) {
    std::swap(names[static_cast<size_t>(i)],
              names[static_cast<size_t>(*rc::gen::inRange(0, i + 1))]);
  }
  std::vector<std::pair<int, int>> edges;
  for (const auto& [a, b] : raw)
    edges.push_back({names[static_cast<size_t>(a)], names[static_cast<size_t>(b)]});
  DeriveOrder o = OrderDerivePrograms(FromEdges(n, edges));
  RC_ASSERT(o.cycle.empty());
  Strings all;
  for (int i = 0; i < n; ++i) all.push_back(std::string(1, static_cast<char>('a' + i)));
  Strings best;  // brute force: the first permutation, in lexicographic order, that is topological
  do {
    if (Topological(all, edges)) {
      best = all;
      break;
    }
  } while (std::next_permutation(all.begin(), all.end()));
  RC_ASSERT(o.order == best);
}

RC_GTEST_PROP(OrderDerivePrograms, AnyReportedCycleIsMadeOfRealEdges, ()) {
  const int n = *rc::gen::inRange(1, 7);
  const auto edges = *rc::gen::container<std::vector<std::pair<int, int>>>(
      rc::gen::pair(rc::gen::inRange(0, n), rc::gen::inRange(0, n)));
  DeriveOrder o = OrderDerivePrograms(FromEdges(n, edges));
  std::set<std::pair<std::string, std::string>> real;
  for (const auto& [a, b] : edges) {
    if (a != b)
      real.insert(
          {std::string(1, static_cast<char>('a' + a)), std::string(1, static_cast<char>('a' + b))});
  }
  if (o.cycle.empty()) {
    RC_ASSERT(o.order.size() == static_cast<size_t>(n));
    RC_ASSERT(Topological(o.order, edges));
    return;
  }
  RC_ASSERT(o.cycle.size() >= 3u);
  RC_ASSERT(o.cycle.front() == o.cycle.back());
  RC_ASSERT(o.cycle.front() == *std::min_element(o.cycle.begin(), o.cycle.end()));
  for (size_t i = 0; i + 1 < o.cycle.size(); ++i)
    RC_ASSERT(real.contains({o.cycle[i], o.cycle[i + 1]}));
  RC_ASSERT(o.order.size() < static_cast<size_t>(n));
}

}  // namespace
}  // namespace loadplan::verifier
