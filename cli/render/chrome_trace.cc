// The Chrome trace of a plan: one track per lane (plus overlap rows), one for derive calls.
#include "cli/render/chrome_trace.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/bytes.h"
#include "cli/render/memory_series.h"

namespace loadplan::render {
namespace {

using nlohmann::json;
using simulator::BufferId;
using simulator::Index;
using simulator::LoadPlan;
using simulator::PlannedBuffer;

constexpr int kPid = 1;
constexpr int kCallsTid = 0;

json Metadata(std::string_view what, int tid, const std::string& name) {
  return {{"name", what}, {"ph", "M"}, {"pid", kPid}, {"tid", tid}, {"args", {{"name", name}}}};
}

json SortIndex(int tid) {
  return {{"name", "thread_sort_index"},
          {"ph", "M"},
          {"pid", kPid},
          {"tid", tid},
          {"args", {{"sort_index", tid}}}};
}

json Names(const LoadPlan& plan, const std::vector<BufferId>& ids) {
  json out = json::array();
  for (const BufferId i : ids)
    out.push_back(Index(i) < plan.buffers.size() ? plan.buffer(i).name : fmt::format("#{}", i));
  return out;
}

void AddCalls(json& events, const LoadPlan& plan) {
  events.push_back(Metadata("thread_name", kCallsTid, "derive calls"));
  events.push_back(SortIndex(kCallsTid));
  for (uint32_t t = 0; t < plan.calls.size(); ++t) {
    const auto& call = plan.calls[t];
    events.push_back({{"name", CallLabel(call)},
                      {"cat", "derive"},
                      {"ph", "X"},
                      {"ts", t},
                      {"dur", 1},
                      {"pid", kPid},
                      {"tid", kCallsTid},
                      {"args",
                       {{"t", t},
                        {"pointer", call.ptr},
                        {"reads", Names(plan, call.reads)},
                        {"writes", Names(plan, call.writes)}}}});
  }
}

// Staged buffers per lane, each lane's split into rows of disjoint windows (greedy by
// window begin: the fewest rows, as for interval colouring).
using LaneRows = std::map<uint32_t, std::vector<std::vector<BufferId>>>;

LaneRows PackLanes(const LoadPlan& plan) {
  std::vector<BufferId> staged = StagedBuffers(plan);
  std::stable_sort(staged.begin(), staged.end(), [&](BufferId a, BufferId b) {
    return plan.buffer(a).window_begin < plan.buffer(b).window_begin;
  });
  LaneRows lanes;
  for (uint32_t lane = 0; lane < plan.lanes; ++lane) lanes[lane];  // every lane gets a track
  std::map<uint32_t, std::vector<uint32_t>> row_ends;
  for (const BufferId i : staged) {
    const PlannedBuffer& b = plan.buffer(i);
    const uint32_t lane = b.lane ? Index(*b.lane) : 0;
    const uint32_t begin = Index(b.window_begin), end = Index(b.window_end);
    auto& rows = lanes[lane];
    auto& ends = row_ends[lane];
    size_t r = 0;
    while (r < ends.size() && ends[r] > begin) ++r;
    if (r == ends.size()) {
      rows.emplace_back();
      ends.push_back(0);
    }
    rows[r].push_back(i);
    ends[r] = std::max(begin, end);
  }
  return lanes;
}

json SourceEvent(const PlannedBuffer& b, int tid) {
  const uint32_t begin = Index(b.window_begin), end = Index(b.window_end);
  json args = {{"lane", b.lane ? Index(*b.lane) : 0},
               {"bytes", b.bytes},
               {"size", base::FormatBytesAuto(b.bytes)},
               {"offset", b.offset},
               {"window", fmt::format("[{}, {})", begin, end)},
               {"first_reader", Index(b.first_reader)},
               {"last_reader", Index(b.last_reader)}};
  if (b.tensor) args["tensor"] = *b.tensor;
  if (b.tensors) args["tensors"] = *b.tensors;
  const uint32_t dur = end > begin ? end - begin : 0;
  return {{"name", b.name}, {"cat", "source"}, {"ph", "X"},  {"ts", begin},
          {"dur", dur},     {"pid", kPid},     {"tid", tid}, {"args", std::move(args)}};
}

void AddLanes(json& events, const LoadPlan& plan) {
  int tid = kCallsTid + 1;
  for (const auto& [lane, rows] : PackLanes(plan)) {
    const size_t count = std::max<size_t>(rows.size(), 1);  // an idle lane still has its track
    for (size_t r = 0; r < count; ++r, ++tid) {
      events.push_back(Metadata(
          "thread_name", tid,
          r == 0 ? fmt::format("lane {}", lane) : fmt::format("lane {} (overlap {})", lane, r)));
      events.push_back(SortIndex(tid));
      if (r >= rows.size()) continue;
      for (const BufferId i : rows[r]) events.push_back(SourceEvent(plan.buffer(i), tid));
    }
  }
}

void AddArenaCounter(json& events, const MemorySeries& s) {
  for (uint32_t t = 0; t <= s.arena_live.size(); ++t) {
    const uint64_t live = t < s.arena_live.size() ? s.arena_live[t] : 0;
    events.push_back({{"name", "arena live"},
                      {"ph", "C"},
                      {"ts", t},
                      {"pid", kPid},
                      {"tid", kCallsTid},
                      {"args", {{"bytes", live}}}});
  }
}

json OtherData(const LoadPlan& plan) {
  return {{"manifest", plan.manifest_name},
          {"clock", "1 unit = 1 derive call, shown as 1 us"},
          {"lanes", plan.lanes},
          {"prefetch", plan.prefetch},
          {"arena_bytes", plan.arena_bytes},
          {"lower_bound", plan.lower_bound},
          {"resident_bytes", plan.resident_bytes}};
}

}  // namespace

base::Result<std::string> RenderChromeTrace(const LoadPlan& plan) {
  const std::optional<MemorySeries> series = ComputeMemorySeries(plan);
  if (!series) return base::Status::Error("trace: a byte total of the plan overflows 64 bits");
  try {
    json events = json::array();
    events.push_back(Metadata("process_name", kCallsTid, "loadplan: " + plan.manifest_name));
    AddCalls(events, plan);
    AddLanes(events, plan);
    AddArenaCounter(events, *series);
    const json trace = {{"traceEvents", std::move(events)},
                        {"displayTimeUnit", "ms"},
                        {"otherData", OtherData(plan)}};
    return trace.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
  } catch (const json::exception& e) {
    return base::Status::Error(fmt::format("trace: {}", e.what()), base::ErrorKind::kInternal);
  }
}

}  // namespace loadplan::render
