// How a kernel parameter touches its argument: read, write, readwrite (a read and a
// write) or scalar (an int64 value, no buffer). Shared by the manifest model and the
// kernel registry.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace loadplan::base {

enum class Access : uint8_t { kRead, kWrite, kReadWrite, kScalar };

std::optional<Access> ParseAccess(std::string_view s);  // "read" | "write" | "readwrite" | "scalar"
std::string_view AccessName(Access a);
inline bool Reads(Access a) { return a == Access::kRead || a == Access::kReadWrite; }
inline bool Writes(Access a) { return a == Access::kWrite || a == Access::kReadWrite; }

}  // namespace loadplan::base
