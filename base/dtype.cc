// safetensors dtype table: names and element sizes in bits.
#include "base/dtype.h"

#include <array>
#include <string_view>

namespace loadplan::base {
namespace {

struct DtypeInfo {
  Dtype dtype;
  std::string_view name;
  uint32_t bits;
};

// In enum order, so kTable[static_cast<size_t>(d)].dtype == d.
constexpr std::array<DtypeInfo, 20> kTable = {{
    {Dtype::kBool, "BOOL", 8},      {Dtype::kF4, "F4", 4},          {Dtype::kF6E2M3, "F6_E2M3", 6},
    {Dtype::kF6E3M2, "F6_E3M2", 6}, {Dtype::kU8, "U8", 8},          {Dtype::kI8, "I8", 8},
    {Dtype::kF8E5M2, "F8_E5M2", 8}, {Dtype::kF8E4M3, "F8_E4M3", 8}, {Dtype::kF8E8M0, "F8_E8M0", 8},
    {Dtype::kI16, "I16", 16},       {Dtype::kU16, "U16", 16},       {Dtype::kF16, "F16", 16},
    {Dtype::kBF16, "BF16", 16},     {Dtype::kI32, "I32", 32},       {Dtype::kU32, "U32", 32},
    {Dtype::kF32, "F32", 32},       {Dtype::kC64, "C64", 64},       {Dtype::kF64, "F64", 64},
    {Dtype::kI64, "I64", 64},       {Dtype::kU64, "U64", 64},
}};

static_assert([] {
  for (size_t i = 0; i < kTable.size(); ++i) {
    if (static_cast<size_t>(kTable[i].dtype) != i) return false;
  }
  return true;
}());

}  // namespace

std::optional<Dtype> ParseDtype(std::string_view name) {
  for (const DtypeInfo& info : kTable) {
    if (info.name == name) return info.dtype;
  }
  return std::nullopt;
}

std::string_view DtypeName(Dtype d) {
  size_t i = static_cast<size_t>(d);
  return i < kTable.size() ? kTable[i].name : std::string_view("?");
}

uint32_t DtypeBits(Dtype d) {
  size_t i = static_cast<size_t>(d);
  return i < kTable.size() ? kTable[i].bits : 0;
}

bool FillsWholeBytes(uint64_t elements, Dtype d) { return (elements % 8) * DtypeBits(d) % 8 == 0; }

std::vector<std::string_view> AllDtypeNames() {
  std::vector<std::string_view> names;
  for (const DtypeInfo& info : kTable) names.push_back(info.name);
  return names;
}

}  // namespace loadplan::base
