// libFuzzer target: safetensors header validation. Input: 8 bytes (little-endian data
// section length) then the header text. Aborts when an accepted header breaks what the
// reader promises: tensors sorted by begin, tiling [0, data length) exactly, each holding
// exactly shape x dtype bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "backend/checkpoint/safetensors.h"

namespace {

[[noreturn]] void Fail(const std::string& why) {
  std::fprintf(stderr, "fuzz_safetensors: %s\n", why.c_str());
  std::abort();
}

void CheckAccepted(const loadplan::backend::ParsedHeader& r, uint64_t data_bytes) {
  uint64_t at = 0;
  for (const loadplan::backend::TensorInfo& t : r.tensors) {
    if (t.begin != at || t.end < t.begin)
      Fail("tensor " + t.name + " does not start where the previous ends");
    unsigned __int128 bits = loadplan::base::DtypeBits(t.dtype);
    for (uint64_t d : t.shape) {
      bits *= d;
      if (bits > (static_cast<unsigned __int128>(1) << 70))
        Fail("tensor " + t.name + " shape overflows");
    }
    if (bits % 8 != 0 || bits / 8 != t.bytes())
      Fail("tensor " + t.name + " bytes differ from shape x dtype");
    at = t.end;
  }
  if (at != data_bytes) Fail("tensors do not cover the data section");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 8) return 0;
  uint64_t data_bytes = 0;
  for (int i = 7; i >= 0; --i) data_bytes = (data_bytes << 8) | data[i];
  const std::string_view header(reinterpret_cast<const char*>(data) + 8, size - 8);
  const loadplan::base::Result<loadplan::backend::ParsedHeader> r =
      loadplan::backend::ParseSafetensorsHeader(header, data_bytes);
  if (r.ok()) CheckAccepted(*r, data_bytes);
  return 0;
}
