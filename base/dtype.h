// safetensors dtype names and their element sizes in bits.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace loadplan::base {

enum class Dtype : uint8_t {
  kBool,
  kF4,
  kF6E2M3,
  kF6E3M2,
  kU8,
  kI8,
  kF8E5M2,
  kF8E4M3,
  kF8E8M0,
  kI16,
  kU16,
  kF16,
  kBF16,
  kI32,
  kU32,
  kF32,
  kC64,
  kF64,
  kI64,
  kU64,
};

std::optional<Dtype> ParseDtype(std::string_view name);  // exact safetensors spelling
std::string_view DtypeName(Dtype d);
uint32_t DtypeBits(Dtype d);  // F4: 4, F6_*: 6, BOOL/U8: 8, ...
// True when `elements` of `d` make a whole number of bytes (an even F4 count, an F6 count
// divisible by 4, any count of a byte-sized dtype); safetensors stores no partial byte.
bool FillsWholeBytes(uint64_t elements, Dtype d);
std::vector<std::string_view> AllDtypeNames();

}  // namespace loadplan::base
