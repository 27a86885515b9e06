// Exact placement search at a fixed capacity: canonical placements, section bounds, splitting.
//
// Buffers are placed in non-decreasing offset order, each at its lowest offset above the placed
// buffers it overlaps (every optimal placement can be pushed down into this canonical form).
// Prunes: (1) canonical order: ties at equal offset follow a static preorder; (2) dominance: a
// buffer is not placed at or above the top of some unplaced buffer's lowest slot, which would
// leave room for that buffer below; (3) per-section bound: floor + unplaced sizes <= capacity,
// where the floor is the highest of: the top of the last buffer placed there, the current
// offset, and the lowest offset any unplaced buffer of the section can take; (4) splitting:
// once no unplaced buffer crosses a section boundary the two sides are solved independently.
#include <algorithm>
#include <limits>
#include <string_view>

#include "simulator/placement/placement.h"
#include "simulator/placement/internal.h"

namespace loadplan::simulator::placement_internal {
namespace {

constexpr uint64_t kInf = std::numeric_limits<uint64_t>::max();

// MiniMalloc's static preorders (SearchVariant::preorders), keys descending (W: lifetime length,
// A: area, T: largest total of unplaced sizes over the buffer's sections when its partition is
// formed), ties by index or by a seeded hash of it (SearchVariant::tie_seed).

// splitmix64: a fixed bijection, so seeded ties are still a total order.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// An undo log: values to restore, newest last (a plain array: pushes are the hot path).
template <typename T>
class UndoLog {
 public:
  void Push(const T& value) {
    if (size_ == data_.size()) data_.resize(std::max<size_t>(1024, 2 * data_.size()));
    data_[size_++] = value;
  }
  size_t size() const { return size_; }
  const T& back() const { return data_[size_ - 1]; }
  void pop_back() { --size_; }

 private:
  std::vector<T> data_;
  size_t size_ = 0;
};

// Depth-first search state at one capacity; every change is undone on the way back up.
class Searcher {
 public:
  Searcher(const ExactInstance& inst, uint64_t capacity)
      : inst_(inst),
        capacity_(capacity),
        n_(inst.global.size()),
        min_off_(n_, 0),
        placed_(n_, 0),
        floor_(inst.members.size(), 0),
        total_(inst.members.size(), 0),
        cuts_(inst.members.size(), 0),
        stamp_(inst.members.size(), 0) {
    at_floor_.resize(inst.members.size());
    for (size_t s = 0; s < inst.members.size(); ++s) {
      at_floor_[s] = static_cast<uint32_t>(inst.members[s].size());
    }
    for (Idx b = 0; b < n_; ++b) {
      for (uint32_t s = inst.sec_lo[b]; s < inst.sec_hi[b]; ++s) total_[s] += inst.size[b];
      for (uint32_t s = inst.sec_lo[b]; s + 1 < inst.sec_hi[b]; ++s) ++cuts_[s];
    }
  }

  // One complete attempt with the given preorder and node limit.
  SearchStatus Run(std::string_view keys, uint64_t tie_seed, uint64_t nodes, uint64_t work,
                   double deadline_s, const std::atomic<bool>* stop) {
    keys_ = keys;
    stop_ = stop;
    tie_seed_ = tie_seed;
    nodes_left_ = nodes;
    work_left_ = work;
    deadline_s_ = deadline_s;
    Partition all{.bufs = {}, .s_lo = 0, .s_hi = static_cast<uint32_t>(inst_.members.size())};
    for (Idx b = 0; b < n_; ++b) all.bufs.push_back(b);
    return SolveSplit(all, Cutpoints(all));
  }

  uint64_t NodesLeft() const { return nodes_left_; }
  uint64_t WorkLeft() const { return work_left_; }
  uint64_t OffsetOf(Idx b) const { return solution_[b]; }

 private:
  struct Partition {
    std::vector<Idx> bufs;
    uint32_t s_lo = 0, s_hi = 0;  // sections [s_lo, s_hi)
  };
  enum class Field : uint8_t { kFloor, kMinOffset, kAtFloor };
  struct Change {
    Field field;
    Idx index;
    uint64_t old;
  };

  std::vector<uint32_t> Cutpoints(const Partition& part) const {
    std::vector<uint32_t> points;
    for (uint32_t s = part.s_lo; s + 1 < part.s_hi; ++s) {
      if (cuts_[s] == 0) points.push_back(s + 1);
    }
    return points;
  }

  // Solves the parts of `part` between consecutive cut points independently.
  SearchStatus SolveSplit(const Partition& part, const std::vector<uint32_t>& points) {
    uint32_t lo = part.s_lo;
    for (size_t k = 0; k <= points.size(); ++k) {
      const uint32_t hi = k < points.size() ? points[k] : part.s_hi;
      Partition sub{.bufs = {}, .s_lo = lo, .s_hi = hi};
      Spend(part.bufs.size());
      for (const Idx b : part.bufs) {
        if (!placed_[b] && inst_.sec_lo[b] < hi && inst_.sec_hi[b] > lo) sub.bufs.push_back(b);
      }
      lo = hi;
      if (sub.bufs.empty()) continue;
      std::vector<uint32_t> saved;
      for (const Idx b : sub.bufs) saved.push_back(rank_[b]);
      AssignRanks(sub.bufs);
      const SearchStatus status = Search(sub, 0, -1);
      for (size_t i = 0; i < saved.size(); ++i) rank_[sub.bufs[i]] = saved[i];
      if (status != SearchStatus::kFound) return status;
    }
    return SearchStatus::kFound;
  }

  // Ranks the buffers of a new partition by the preorder keys_ (see kPreorders).
  void AssignRanks(std::vector<Idx> bufs) {
    auto key = [&](char c, Idx b) -> long double {
      if (c == 'W') return static_cast<long double>(inst_.length[b]);
      if (c == 'A') return static_cast<long double>(inst_.size[b]) * inst_.length[b];
      return static_cast<long double>(total_max_[b]);
    };
    Spend(bufs.size() * 8);  // the sort
    for (const Idx b : bufs) {
      Spend(inst_.sec_hi[b] - inst_.sec_lo[b]);
      total_max_[b] = 0;
      for (uint32_t s = inst_.sec_lo[b]; s < inst_.sec_hi[b]; ++s) {
        total_max_[b] = std::max(total_max_[b], total_[s]);
      }
    }
    std::sort(bufs.begin(), bufs.end(), [&](Idx a, Idx b) {
      for (const char c : keys_) {
        if (key(c, a) != key(c, b)) return key(c, a) > key(c, b);
      }
      return Tie(a) < Tie(b);
    });
    for (uint32_t r = 0; r < bufs.size(); ++r) rank_[bufs[r]] = r;
  }

  bool Stopped() const {
    if (stop_ != nullptr && stop_->load(std::memory_order_relaxed)) return true;
    return deadline_s_ > 0 && SteadySeconds() > deadline_s_;
  }

  uint64_t Tie(Idx b) const { return tie_seed_ == 0 ? b : Mix(tie_seed_ ^ Mix(b)); }

  bool OutOfNodes() {
    if (nodes_left_ == 0 || work_left_ == 0) return true;
    --nodes_left_;
    if ((nodes_left_ & 1023) == 0 && (deadline_s_ > 0 || stop_ != nullptr) && Stopped()) {
      nodes_left_ = work_left_ = 0;
      return true;
    }
    return false;
  }

  SearchStatus Search(const Partition& part, uint64_t cur, int64_t cur_rank) {
    if (OutOfNodes()) return SearchStatus::kAborted;
    Spend(part.bufs.size() + (part.s_hi - part.s_lo));
    const std::vector<uint32_t>& rank = rank_;
    std::vector<Idx> cands;
    uint64_t min_height = kInf;
    bool any = false;
    for (const Idx b : part.bufs) {
      if (placed_[b]) continue;
      any = true;
      const uint64_t o = min_off_[b];
      min_height = std::min(min_height, o + inst_.size[b]);
      if (o > cur || (o == cur && static_cast<int64_t>(rank[b]) > cur_rank)) cands.push_back(b);
    }
    if (!any) return SearchStatus::kFound;
    std::erase_if(cands, [&](Idx b) { return min_off_[b] >= min_height; });
    std::sort(cands.begin(), cands.end(), [&](Idx a, Idx b) {
      return min_off_[a] != min_off_[b] ? min_off_[a] < min_off_[b] : rank[a] < rank[b];
    });
    // Floors only rise, so a candidate must already satisfy o + total <= capacity everywhere.
    uint64_t max_total = 0;
    for (uint32_t s = part.s_lo; s < part.s_hi; ++s) max_total = std::max(max_total, total_[s]);
    for (const Idx b : cands) {
      const uint64_t o = min_off_[b];
      if (o + max_total > capacity_) break;  // candidates are sorted by offset
      const size_t mark = trail_.size();
      hatless_ = true;
      const SearchStatus status = PlaceAt(b, o) ? Descend(part, b, o) : SearchStatus::kInfeasible;
      const bool hatless = hatless_;
      Unplace(b, mark);
      if (status != SearchStatus::kInfeasible) return status;
      // Nothing unplaced overlaps b: it sits at o whatever comes first, so every later
      // candidate (at offset >= o) leads to the same failure.
      if (hatless) break;
    }
    return SearchStatus::kInfeasible;
  }

  // Continues after placing b: splits the partition where b was the last crossing buffer.
  SearchStatus Descend(const Partition& part, Idx b, uint64_t o) {
    std::vector<uint32_t> points;
    for (uint32_t s = inst_.sec_lo[b]; s + 1 < inst_.sec_hi[b]; ++s) {
      if (--cuts_[s] == 0) points.push_back(s + 1);
    }
    const SearchStatus status =
        points.empty() ? Search(part, o, static_cast<int64_t>(rank_[b])) : SolveSplit(part, points);
    for (uint32_t s = inst_.sec_lo[b]; s + 1 < inst_.sec_hi[b]; ++s) ++cuts_[s];
    return status;
  }

  // Places b at o and updates floors; false when some section's floor + unplaced sizes exceeds
  // the capacity (the caller undoes the placement either way). Requires o + total <= capacity
  // in every section (checked by the caller), which covers the sections whose floor becomes top.
  //
  // Invariant: a section with unplaced buffers has floor == the lowest min offset among them, so
  // a raised buffer can lift a floor only where its old min offset equalled that floor. In b's
  // sections every unplaced buffer overlaps b, so the floor is b's top as soon as one of them
  // is raised to it; only the others need a scan.
  bool PlaceAt(Idx b, uint64_t o) {
    placed_[b] = 1;
    solution_[b] = o;
    const uint64_t top = o + inst_.size[b];
    const uint32_t lo = inst_.sec_lo[b], hi = inst_.sec_hi[b];
    for (uint32_t s = lo; s < hi; ++s) {
      trail_.Push({Field::kFloor, s, floor_[s]});
      trail_.Push({Field::kAtFloor, s, at_floor_[s]});
      floor_[s] = top;
      at_floor_[s] = 0;
      total_[s] -= inst_.size[b];
    }
    ++epoch_;
    affected_.clear();
    cover_.assign(hi - lo + 1, 0);
    Spend(inst_.overlaps[b].size() + 2 * (hi - lo));
    for (const Idx other : inst_.overlaps[b]) {
      if (placed_[other]) continue;
      hatless_ = false;
      if (min_off_[other] >= top) continue;
      const uint64_t old = min_off_[other];
      trail_.Push({Field::kMinOffset, other, old});
      min_off_[other] = top;
      const uint32_t a = inst_.sec_lo[other], z = inst_.sec_hi[other];
      ++cover_[std::max(a, lo) - lo];
      --cover_[std::min(z, hi) - lo];
      for (uint32_t s = a; s < lo; ++s) MarkIfAtFloor(s, old);
      for (uint32_t s = hi; s < z; ++s) MarkIfAtFloor(s, old);
      Spend(z - a);
    }
    int32_t covered = 0;
    for (uint32_t s = lo; s < hi; ++s) {
      covered += cover_[s - lo];
      if (covered == 0) affected_.push_back(s);
      at_floor_[s] = static_cast<uint32_t>(covered);  // an undercount is safe: see AtFloor
    }
    return RaiseFloors();
  }

  // at_floor_[s] never exceeds the number of unplaced buffers of s whose min offset equals the
  // floor; when it drops to 0 the section is rescanned, which sets it exactly.
  // Work is counted in inner-loop steps so that budgets track time across problem shapes.
  void Spend(uint64_t steps) { work_left_ -= std::min(work_left_, steps); }

  void MarkIfAtFloor(uint32_t s, uint64_t old) {
    if (floor_[s] != old || stamp_[s] == epoch_) return;
    if (at_floor_[s] > 1) {
      trail_.Push({Field::kAtFloor, s, at_floor_[s]});
      --at_floor_[s];
      return;
    }
    stamp_[s] = epoch_;
    affected_.push_back(s);
  }

  // Lifts each affected section's floor to the lowest min offset of its unplaced buffers.
  bool RaiseFloors() {
    for (const uint32_t s : affected_) {
      Spend(inst_.members[s].size());
      uint64_t lowest = kInf;
      uint32_t count = 0;
      for (const Idx m : inst_.members[s]) {
        if (placed_[m] || min_off_[m] > lowest) continue;
        count = min_off_[m] == lowest ? count + 1 : 1;
        lowest = min_off_[m];
      }
      if (lowest == kInf) continue;
      trail_.Push({Field::kAtFloor, s, at_floor_[s]});
      at_floor_[s] = count;
      if (floor_[s] < lowest) {
        trail_.Push({Field::kFloor, s, floor_[s]});
        floor_[s] = lowest;
        if (lowest + total_[s] > capacity_) return false;
      }
    }
    return true;
  }

  void Unplace(Idx b, size_t mark) {
    while (trail_.size() > mark) {
      const Change& c = trail_.back();
      switch (c.field) {
        case Field::kFloor: floor_[c.index] = c.old; break;
        case Field::kMinOffset: min_off_[c.index] = c.old; break;
        case Field::kAtFloor: at_floor_[c.index] = static_cast<uint32_t>(c.old); break;
      }
      trail_.pop_back();
    }
    for (uint32_t s = inst_.sec_lo[b]; s < inst_.sec_hi[b]; ++s) total_[s] += inst_.size[b];
    placed_[b] = 0;
  }

  const ExactInstance& inst_;
  const uint64_t capacity_;
  const size_t n_;
  std::vector<uint64_t> min_off_;
  std::vector<uint64_t> total_max_ = std::vector<uint64_t>(n_, 0);
  std::vector<char> placed_;
  std::vector<uint64_t> floor_, total_;
  std::vector<uint32_t> cuts_;
  std::vector<uint32_t> at_floor_;
  std::vector<uint64_t> stamp_;
  std::vector<uint32_t> affected_;
  std::vector<int32_t> cover_;
  UndoLog<Change> trail_;
  std::vector<uint64_t> solution_ = std::vector<uint64_t>(n_, 0);
  std::vector<uint32_t> rank_ = std::vector<uint32_t>(n_, 0);
  std::string_view keys_;
  uint64_t tie_seed_ = 0;
  const std::atomic<bool>* stop_ = nullptr;
  uint64_t nodes_left_ = 0;
  uint64_t work_left_ = 0;  // inner-loop steps (see Spend)
  uint64_t epoch_ = 0;
  bool hatless_ = false;  // set by PlaceAt: no unplaced buffer overlaps the placed one
  double deadline_s_ = 0;
};

}  // namespace

FeasibilityResult SolveFeasibility(const PlacementProblem& problem, uint64_t capacity,
                                   const SearchLimits& limits) {
  const ExactInstance inst = BuildExactInstance(problem);
  Searcher searcher(inst, capacity);
  FeasibilityResult result;
  const SearchVariant fallback;
  const SearchVariant& variant = limits.variant ? *limits.variant : fallback;
  // Round robin over the preorders with a node limit that doubles each round.
  uint64_t limit = std::max<uint64_t>(1000, 2 * inst.global.size()) * variant.restart_scale;
  uint64_t left = limits.nodes;
  uint64_t work_left = limits.work;
  while (left > 0 && work_left > 0) {
    for (const std::string& keys : variant.preorders) {
      const uint64_t run = std::min(limit, left);
      const SearchStatus status =
          searcher.Run(keys, variant.tie_seed, run, work_left, limits.deadline_s, limits.stop);
      const uint64_t used = run - searcher.NodesLeft();
      left -= used;
      result.nodes += used;
      result.work += work_left - searcher.WorkLeft();
      work_left = searcher.WorkLeft();
      if (status == SearchStatus::kFound) {
        result.status = status;
        result.offsets.assign(problem.buffers.size(), 0);
        for (Idx b = 0; b < inst.global.size(); ++b) {
          result.offsets[inst.global[b]] = searcher.OffsetOf(b);
        }
        return result;
      }
      if (status == SearchStatus::kInfeasible) {
        result.status = status;
        return result;
      }
      const bool timed_out = (limits.deadline_s > 0 && SteadySeconds() > limits.deadline_s) ||
                             (limits.stop != nullptr && limits.stop->load());
      if (left == 0 || work_left == 0 || timed_out) return result;
    }
    limit = limit > kInf / 2 ? kInf : limit * 2;
  }
  return result;
}

}  // namespace loadplan::simulator::placement_internal
