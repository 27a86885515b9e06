// The liveness view's rows: bars per buffer on the plan's clock, grouped by layer.
#include "cli/render/liveness_rows.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "cli/render/memory_series.h"

namespace loadplan::render {
namespace {

using simulator::BufferId;
using simulator::Index;
using simulator::LoadPlan;
using simulator::PlannedBuffer;
using simulator::Residence;

std::optional<LiveBar> BarOf(const PlannedBuffer& b, BufferId id, uint32_t end) {
  switch (b.residence) {
    case Residence::kStaged: return LiveBar{id, Index(b.window_begin), Index(b.window_end)};
    case Residence::kResident: return LiveBar{id, 0, end + 1};
    case Residence::kServe: return LiveBar{id, end, end + 1};
    default: return std::nullopt;
  }
}

// Order inside a group: sources by window, then resident, then serve; names break ties.
int RankOf(Residence r) { return r == Residence::kStaged ? 0 : r == Residence::kResident ? 1 : 2; }

// Natural order of group names: digit runs compare as numbers; the shared group first.
bool GroupLess(std::string_view a, std::string_view b) {
  if ((a == kSharedGroup) != (b == kSharedGroup)) return a == kSharedGroup;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) &&
        std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
      while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
      const std::string_view da = a.substr(i, i2 - i), db = b.substr(j, j2 - j);
      if (da.size() != db.size()) return da.size() < db.size();
      if (da != db) return da < db;
      i = i2, j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

bool LiveAt(const PlannedBuffer& b, const std::optional<simulator::WidestMoment>& w) {
  if (!w || b.residence != Residence::kStaged) return false;
  const uint32_t t = Index(w->time);
  return Index(b.window_begin) <= t && t < Index(b.window_end);
}

struct Member {
  LiveBar bar;
  const PlannedBuffer* buffer;
};

// The members of each group, each group's members in row order.
std::map<std::string, std::vector<Member>, decltype(&GroupLess)> Groups(const LoadPlan& plan,
                                                                        uint32_t end) {
  std::map<std::string, std::vector<Member>, decltype(&GroupLess)> groups(&GroupLess);
  for (uint32_t i = 0; i < plan.buffers.size(); ++i) {
    const PlannedBuffer& b = plan.buffers[i];
    if (const std::optional<LiveBar> bar = BarOf(b, BufferId{i}, end))
      groups[LayerGroup(b.name)].push_back({*bar, &b});
  }
  for (auto& [name, members] : groups) {
    std::stable_sort(members.begin(), members.end(), [](const Member& x, const Member& y) {
      const int rx = RankOf(x.buffer->residence), ry = RankOf(y.buffer->residence);
      if (rx != ry) return rx < ry;
      return x.bar.begin < y.bar.begin;  // buffers come sorted by name
    });
  }
  return groups;
}

bool AddRow(LiveRow& row, const Member& m, const std::optional<simulator::WidestMoment>& w) {
  row.bars.push_back(m.bar);
  row.live_at_widest = row.live_at_widest || LiveAt(*m.buffer, w);
  return !__builtin_add_overflow(row.bytes, m.buffer->bytes, &row.bytes);
}

}  // namespace

std::string LayerGroup(std::string_view name) {
  size_t begin = 0;
  while (begin < name.size()) {
    const size_t dot = name.find('.', begin);
    const size_t end = dot == std::string_view::npos ? name.size() : dot;
    if (end > begin && end < name.size() &&
        std::isdigit(static_cast<unsigned char>(name[end - 1]))) {
      return std::string(name.substr(0, end));
    }
    if (dot == std::string_view::npos) break;
    begin = dot + 1;
  }
  return std::string(kSharedGroup);
}

uint32_t LoadClockEnd(const LoadPlan& plan) {
  uint64_t end = std::max<uint64_t>(plan.calls.size(), 1);
  for (const BufferId i : StagedBuffers(plan))
    end = std::max<uint64_t>(end, Index(plan.buffer(i).window_end));
  return static_cast<uint32_t>(std::min<uint64_t>(end, UINT32_MAX - 1));
}

std::optional<LiveModel> BuildLiveModel(const LoadPlan& plan, RowMode mode, size_t max_rows) {
  LiveModel model{.clock_end = LoadClockEnd(plan), .widest = simulator::FindWidestMoment(plan)};
  const auto groups = Groups(plan, model.clock_end);
  size_t buffers = 0;
  for (const auto& [name, members] : groups) buffers += members.size();
  model.collapsed = mode == RowMode::kGroups || (mode == RowMode::kAuto && buffers > max_rows);
  for (const auto& [name, members] : groups) {
    if (model.collapsed) model.rows.push_back(LiveRow{.label = name, .group = name});
    for (const Member& m : members) {
      if (!model.collapsed) model.rows.push_back(LiveRow{.label = m.buffer->name, .group = name});
      if (!AddRow(model.rows.back(), m, model.widest)) return std::nullopt;
    }
  }
  return model;
}

}  // namespace loadplan::render
