// Byte sizes and device presets: "139.8GiB", "288GB", "h200".
#include <algorithm>
#include <cctype>
#include <string>

#include <fmt/format.h>

#include "simulator/phases/phases.h"

namespace loadplan::simulator {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::optional<unsigned __int128> UnitOf(std::string_view unit) {
  const std::string u = Lower(unit);
  if (u.empty() || u == "b") return 1;
  const std::string prefixes = "kmgt";
  const size_t p = u.size() >= 2 ? prefixes.find(u[0]) : std::string::npos;
  if (p == std::string::npos) return std::nullopt;
  const std::string rest = u.substr(1);
  unsigned __int128 base = rest == "b" ? 1000 : rest == "ib" ? 1024 : 0;
  if (base == 0) return std::nullopt;
  unsigned __int128 unit_bytes = 1;
  for (size_t i = 0; i <= p; ++i) unit_bytes *= base;
  return unit_bytes;
}

}  // namespace

std::optional<uint64_t> ParseByteSize(std::string_view text) {
  size_t i = 0;
  unsigned __int128 whole = 0, frac = 0, scale = 1;
  bool digits = false;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, digits = true) {
    whole = whole * 10 + static_cast<unsigned>(text[i] - '0');
    if (whole > UINT64_MAX) return std::nullopt;
  }
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]));
         ++i, digits = true) {
      if (scale > UINT64_MAX) return std::nullopt;  // more fraction digits than matter
      frac = frac * 10 + static_cast<unsigned>(text[i] - '0');
      scale *= 10;
    }
  }
  if (!digits) return std::nullopt;
  while (i < text.size() && text[i] == ' ') ++i;
  const std::optional<unsigned __int128> unit = UnitOf(text.substr(i));
  if (!unit) return std::nullopt;
  const unsigned __int128 bytes = whole * *unit + frac * *unit / scale;
  if (bytes > UINT64_MAX) return std::nullopt;
  return static_cast<uint64_t>(bytes);
}

const std::vector<DevicePreset>& DevicePresets() {
  static const std::vector<DevicePreset> kPresets = {
      {"h100", 85017493504, true,
       "79.18 GiB: total cudaMemGetInfo reports on the lent NVIDIA H100 80GB HBM3 (81559 MiB as "
       "nvidia-smi counts it, less what the driver holds), read by `loadplan run` on 2026-12-06 "
       "(docs/planner.md, device presets)",
       "total"},
      {"h200", 150109106995, true,
       "139.8 GiB: total cudaMemGetInfo reports on the lent NVIDIA H200 (143771 MiB as nvidia-smi "
       "counts it, less what the driver holds), measured to 0.1 GiB (docs/planner.md, device "
       "presets); "
       "the byte count is 139.8 * 2^30 rounded down",
       "total"},
      {"b200", 180000000000, false,
       "180 GB nominal: NVIDIA DGX B200 datasheet, 1,440 GB of HBM3e over 8 GPUs", "total"},
      {"gb300", 288000000000, false, "288 GB nominal: NVIDIA GB300 marketed HBM3e per GPU",
       "total"},
  };
  return kPresets;
}

std::string PresetNames() {
  std::string out;
  for (const DevicePreset& p : DevicePresets())
    out += (out.empty() ? "" : ", ") + std::string(p.name);
  return out;
}

std::optional<DeviceMemory> ResolveDeviceMemory(std::string_view text) {
  const std::string name = Lower(text);
  for (const DevicePreset& p : DevicePresets()) {
    if (p.name == name) {
      return DeviceMemory{
          .bytes = p.bytes,
          .preset = &p,
          .label = fmt::format("{} ({})", p.name, p.measured ? "measured" : "nominal")};
    }
  }
  const std::optional<uint64_t> bytes = ParseByteSize(text);
  if (!bytes) return std::nullopt;
  return DeviceMemory{.bytes = *bytes, .preset = nullptr, .label = std::string(text)};
}

std::optional<uint64_t> ParseDeviceMemory(std::string_view text) {
  const std::optional<DeviceMemory> resolved = ResolveDeviceMemory(text);
  if (!resolved) return std::nullopt;
  return resolved->bytes;
}

}  // namespace loadplan::simulator
