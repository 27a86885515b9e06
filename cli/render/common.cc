// Shared pieces of the renderers: escaping, byte formatting, colours, memory series.
#include "cli/render/common.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace loadplan::render {

std::string XmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: {
        const auto u = static_cast<unsigned char>(c);
        if ((u < 0x20 && c != '\t' && c != '\n') || u == 0x7f) {
          out += fmt::format("\\x{:02x}", u);
        } else {
          out += c;
        }
      }
    }
  }
  return out;
}

std::string_view KindName(verifier::BufferKind kind) {
  using K = verifier::BufferKind;
  switch (kind) {
    case K::kWeight: return "weight";
    case K::kSource: return "source";
    case K::kCarry: return "carry";
    case K::kState: return "state";
    case K::kScratch: return "scratch";
    case K::kInput: return "input";
    case K::kOutput: return "output";
    case K::kPeer: return "peer";
  }
  return "unknown";
}

std::string_view KindColour(verifier::BufferKind kind) {
  using K = verifier::BufferKind;
  switch (kind) {
    case K::kWeight: return "#9ecae1";  // blue
    case K::kSource: return "#fdae6b";  // orange
    case K::kCarry: return "#a1d99b";   // green
    default: return "#d9d9d9";          // grey: not part of loading
  }
}

std::string_view LaneColour(uint32_t lane) {
  static constexpr std::array<std::string_view, 8> kPalette{
      "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  return kPalette[lane % kPalette.size()];
}

std::optional<MemorySeries> ComputeMemorySeries(const simulator::LoadPlan& plan) {
  MemorySeries s;
  s.arena_live.assign(plan.calls.size(), 0);
  for (const auto& b : plan.buffers) {
    if (b.residence == simulator::Residence::kResident) {
      uint64_t& sum = b.kind == verifier::BufferKind::kWeight ? s.weight_bytes : s.carry_bytes;
      if (__builtin_add_overflow(sum, b.bytes, &sum)) return std::nullopt;
      continue;
    }
    if (b.residence != simulator::Residence::kStaged) continue;
    const size_t end = std::min<size_t>(simulator::Index(b.window_end), s.arena_live.size());
    for (size_t t = simulator::Index(b.window_begin); t < end; ++t) {
      if (__builtin_add_overflow(s.arena_live[t], b.bytes, &s.arena_live[t])) return std::nullopt;
    }
  }
  for (const uint64_t v : s.arena_live) s.peak_arena_live = std::max(s.peak_arena_live, v);
  return s;
}

std::vector<simulator::BufferId> StagedBuffers(const simulator::LoadPlan& plan) {
  std::vector<simulator::BufferId> out;
  std::vector<bool> seen(plan.buffers.size(), false);
  auto take = [&](uint32_t i) {
    if (i >= plan.buffers.size() || seen[i]) return;
    if (plan.buffers[i].residence != simulator::Residence::kStaged) return;
    seen[i] = true;
    out.push_back(simulator::BufferId{i});
  };
  for (const simulator::BufferId i : plan.arrival) take(simulator::Index(i));
  for (uint32_t i = 0; i < plan.buffers.size(); ++i) take(i);  // any the arrival list misses
  return out;
}

std::string CallLabel(const simulator::PlannedCall& call) {
  return fmt::format("{}#{}", call.program, call.call_in_program);
}

}  // namespace loadplan::render
