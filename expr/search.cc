// Branch and bound: best-first over sub-boxes ordered by the lower bound of their enclosure.
//
// Each examined box is first reduced: a variable in which the objective is monotone over
// the box is fixed at the endpoint that can hold the optimum (all directions are judged
// on the same box, so fixing them together is sound). Then a few points are evaluated,
// and unless the box is a single point it is bisected on its widest variable. A box whose
// lower bound is at least min(best value, threshold) cannot matter and is dropped.
// Maximisation minimises the negated objective (values are 128-bit, so negation is exact).
#include <queue>
#include <utility>

#include "expr/internal.h"
#include "expr/search.h"

namespace loadplan::expr::detail {
namespace {

constexpr Wide kNegInf = -(Wide{1} << 100);

bool OccursInAtom(const Expr& e, const std::string& var) {
  switch (e.op) {
    case ExprOp::kConst:
    case ExprOp::kVar: return false;
    case ExprOp::kNeg:
    case ExprOp::kAdd:
    case ExprOp::kSub:
    case ExprOp::kMul:
      for (const Expr& a : e.args) {
        if (OccursInAtom(a, var)) return true;
      }
      return false;
    default: return Variables(e).count(var) > 0;
  }
}

class Search {
 public:
  Search(const Objective& f, std::optional<Wide> threshold) : f_(f) {
    if (threshold) thr_key_ = Key(*threshold);
  }
  SearchResult Run(const Box& box, int max_boxes);

 private:
  struct Entry {
    Wide lb;
    uint64_t seq;
    Box box;
  };
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.lb != b.lb ? a.lb > b.lb : a.seq < b.seq;
    }
  };

  Wide Key(Wide v) const { return f_.maximise ? -v : v; }
  std::optional<Wide> Cutoff() const {
    if (best_key_ && thr_key_) return std::min(*best_key_, *thr_key_);
    return best_key_ ? best_key_ : thr_key_;
  }
  // The objective's shape as the box sees it (decided atoms resolved), with differences.
  struct View {
    Expr shape;
    std::map<std::string, Expr> differences;
    bool resolved = false;
  };
  View ViewOf(const Box& b) const;
  Wide Lower(const Box& b) const;
  Direction DirectionOf(const View& view, const Box& b, const std::string& v) const;
  Box Reduce(const Box& b) const;
  bool Sample(const Box& b, bool root);
  SearchResult Finish(SearchResult::Status status);

  const Objective& f_;
  std::optional<Wide> thr_key_;
  std::optional<Wide> best_key_;
  Assignment best_at_;
  std::string error_;
};

Search::View Search::ViewOf(const Box& b) const {
  std::optional<Expr> resolved = ResolveAtoms(f_.shape, b);
  if (!resolved) return View{f_.shape, f_.differences, false};
  Expr shape = Simplify(*resolved);
  std::map<std::string, Expr> differences = ForwardDifferences(shape);
  return View{std::move(shape), std::move(differences), true};
}

Wide Search::Lower(const Box& b) const {
  Wide lb = kNegInf;
  auto consider = [&](const Expr& e) {
    std::optional<Range> r = Enclose(e, b).range;
    if (r) lb = std::max(lb, f_.maximise ? -Wide{r->max} : Wide{r->min});
  };
  consider(f_.shape);
  for (const Expr& e : f_.enclosures) consider(e);
  if (std::optional<Expr> resolved = ResolveAtoms(f_.shape, b)) consider(Simplify(*resolved));
  return lb;
}

Direction Search::DirectionOf(const View& view, const Box& b, const std::string& v) const {
  Direction d = StructuralDirection(view.shape, v, b);
  if (view.resolved && d == Direction::kUnknown) d = StructuralDirection(f_.shape, v, b);
  for (size_t i = 0; d == Direction::kUnknown && i < f_.enclosures.size(); ++i) {
    d = StructuralDirection(f_.enclosures[i], v, b);
  }
  auto it = view.differences.find(v);
  if (d == Direction::kUnknown && it != view.differences.end())
    d = DifferenceDirection(it->second, v, b);
  return f_.maximise ? Flip(d) : d;
}

Box Search::Reduce(const Box& b) const {
  Box out = b;
  View view = ViewOf(b);
  for (const auto& [name, r] : b) {
    if (r.min == r.max) continue;
    Direction d = DirectionOf(view, b, name);
    if (d == Direction::kUp || d == Direction::kConst) out[name].max = r.min;
    if (d == Direction::kDown) out[name].min = r.max;
  }
  return out;
}

// Evaluates sample points; true when the search must stop (an error, or a value below
// the threshold).
bool Search::Sample(const Box& b, bool root) {
  for (Assignment& a : SamplePoints(b, root)) {
    PointValue pv = f_.eval(a);
    if (!pv.value) {
      error_ = pv.error;
      best_at_ = std::move(a);
      return true;
    }
    Wide key = Key(*pv.value);
    if (!best_key_ || key < *best_key_) {
      best_key_ = key;
      best_at_ = std::move(a);
    }
    if (thr_key_ && *best_key_ < *thr_key_) return true;
  }
  return false;
}

SearchResult Search::Finish(SearchResult::Status status) {
  SearchResult out{.status = status, .best_at = best_at_, .error = error_};
  if (best_key_) out.best = Key(*best_key_);
  return out;
}

SearchResult Search::Run(const Box& box, int max_boxes) {
  std::priority_queue<Entry, std::vector<Entry>, Later> heap;
  heap.push(Entry{Lower(box), 0, box});
  uint64_t seq = 1;
  int examined = 0;
  while (!heap.empty()) {
    std::optional<Wide> cutoff = Cutoff();
    if (cutoff && heap.top().lb >= *cutoff) break;
    if (examined >= max_boxes) {
      SearchResult out = Finish(SearchResult::Status::kBudget);
      Wide lb = heap.top().lb;
      if (lb != kNegInf) out.bound = Key(best_key_ ? std::min(lb, *best_key_) : lb);
      return out;
    }
    Entry e = heap.top();
    heap.pop();
    Box reduced = Reduce(e.box);
    if (Sample(reduced, ++examined == 1)) {
      return Finish(error_.empty() ? SearchResult::Status::kBelow : SearchResult::Status::kError);
    }
    std::optional<std::pair<Box, Box>> halves = Split(reduced);
    if (!halves) continue;
    for (Box* h : {&halves->first, &halves->second}) {
      Wide lb = Lower(*h);
      cutoff = Cutoff();
      if (!cutoff || lb < *cutoff) heap.push(Entry{lb, seq++, std::move(*h)});
    }
  }
  return Finish(SearchResult::Status::kComplete);
}

}  // namespace

std::map<std::string, Expr> ForwardDifferences(const Expr& shape) {
  std::map<std::string, Expr> out;
  for (const std::string& v : Variables(shape)) {
    if (OccursInAtom(shape, v)) continue;
    Expr shifted = Substitute(shape, {{v, Expr::Var(v) + Expr::Const(1)}});
    out.emplace(v, Simplify(std::move(shifted) - shape));
  }
  return out;
}

SearchResult Optimise(const Objective& f, const Box& box, std::optional<Wide> threshold,
                      int max_boxes) {
  return Search(f, threshold).Run(box, max_boxes);
}

}  // namespace loadplan::expr::detail
