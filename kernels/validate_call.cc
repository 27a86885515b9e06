// Validation of derive-kernel calls (see validate_call.h): bindings, preconditions and extents
// come from the registry; the scalar -> RowShape mapping and pointer checks live here.
#include "kernels/validate_call.h"

#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "base/bytes.h"

namespace loadplan::kernels {
namespace {

using base::Access;

Status Fail(std::string_view kernel, const std::string& what) {
  return Status::Error(std::string(kernel) + ": " + what);
}

// Every contract parameter bound with the right kind; no argument outside the contract.
Status CheckBindings(const KernelSpec& k, const KernelArgs& args) {
  for (const ParamSpec& p : k.params) {
    const bool scalar = p.access == Access::kScalar;
    if (scalar ? !args.scalars.contains(p.name) : !args.buffers.contains(p.name)) {
      return Fail(k.name, "missing " + std::string(scalar ? "scalar" : "buffer") + " argument `" +
                              p.name + "`");
    }
  }
  for (const auto& [name, b] : args.buffers) {
    const ParamSpec* p = FindParam(k, name);
    if (p == nullptr || p->access == Access::kScalar)
      return Fail(k.name, "no buffer parameter `" + name + "`");
  }
  for (const auto& [name, v] : args.scalars) {
    const ParamSpec* p = FindParam(k, name);
    if (p == nullptr || p->access != Access::kScalar)
      return Fail(k.name, "no scalar parameter `" + name + "`");
    if (v < 0) return Fail(k.name, name + " = " + std::to_string(v) + " is negative");
  }
  return Status::Ok();
}

// The first precondition that fails, with the values of the scalars it names.
Status CheckPreconditions(const KernelSpec& k, const expr::Assignment& at) {
  const std::vector<const Precondition*> bad = Violated(k, at);
  if (bad.empty()) return Status::Ok();
  const Precondition& p = *bad.front();
  std::string values;
  for (const std::string& v :
       expr::Variables(expr::Expr::Binary(expr::ExprOp::kSub, p.lhs, p.rhs))) {
    values += fmt::format("{}{} = {}", values.empty() ? "" : ", ", v, at.at(v));
  }
  return Fail(k.name, fmt::format("{} does not hold at {} ({})", p.text, values, p.why));
}

// Each buffer's extent (registry expression x dtype bytes, checked) fits its bound bytes.
Status CheckExtents(const KernelSpec& k, const KernelArgs& args, const expr::Assignment& at,
                    std::map<std::string, uint64_t, std::less<>>& bytes) {
  for (const ParamSpec& p : k.params) {
    if (p.access == Access::kScalar) continue;
    const std::optional<int64_t> e = expr::ValueAt(*p.extent, at);
    const std::optional<uint64_t> bytes_needed =
        e && *e >= 0 ? base::ElementBytes(static_cast<uint64_t>(*e), *p.dtype) : std::nullopt;
    if (!bytes_needed) return Fail(k.name, p.name + " extent overflows 64 bits");
    const uint64_t need = *bytes_needed;
    const BufferArg& b = args.buffers.find(p.name)->second;
    if (b.bytes < need) {
      return Fail(k.name,
                  fmt::format("{} needs {} bytes, the buffer has {}", p.name, need, b.bytes));
    }
    if (need > 0 && b.data == nullptr) return Fail(k.name, p.name + " is a null pointer");
    bytes[p.name] = need;
  }
  return Status::Ok();
}

bool Overlap(const void* a, uint64_t a_bytes, const void* b, uint64_t b_bytes) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return a_bytes > 0 && b_bytes > 0 && x < y + b_bytes && y < x + a_bytes;
}

Status CheckNoOverlap(std::string_view kernel, const ResolvedCall& c) {
  if (Overlap(c.src, c.src_bytes, c.dst, c.dst_bytes))
    return Fail(kernel, "a read buffer overlaps dst");
  if (Overlap(c.scales, c.scales_bytes, c.dst, c.dst_bytes))
    return Fail(kernel, "a read buffer overlaps dst");
  return Status::Ok();
}

// The RowShape of an mxfp4_fc* call; the preconditions bound every value to int32.
// `pad_cols` empty (biases): one element per row. `col_div`: elements per padded column.
RowShape Rows(const expr::Assignment& at, bool fc1, const char* pad_rows, const char* pad_cols,
              int64_t col_div) {
  const int64_t rows_out = fc1 ? 2 * at.at(pad_rows) : at.at(pad_rows);
  const int64_t cols = *pad_cols != '\0' ? at.at("cols") : 1;
  const int64_t cols_out = *pad_cols != '\0' ? at.at(pad_cols) / col_div : 1;
  return RowShape{.fc1 = fc1,
                  .experts = static_cast<int32_t>(at.at("experts")),
                  .rows = static_cast<int32_t>(at.at("rows")),
                  .cols = static_cast<int32_t>(cols),
                  .out_rows = static_cast<int32_t>(rows_out),
                  .out_cols = static_cast<int32_t>(cols_out)};
}

// The buffer parameter read as `src`: the MXFP4 dequant kernels call it `blocks`.
const char* SourceParam(KernelId id) {
  const bool blocks = id == KernelId::kMxfp4Dequant || id == KernelId::kMxfp4ExpertsBf16;
  return blocks ? "blocks" : "src";
}

bool HasScales(KernelId id) {
  return id == KernelId::kMxfp4Dequant || id == KernelId::kMxfp4ExpertsBf16 ||
         id == KernelId::kFp8BlockBf16;
}

// Pointers, sizes and shape of a call whose bindings, preconditions and extents hold.
void Fill(KernelId id, const KernelArgs& args, const expr::Assignment& at, ResolvedCall& c) {
  c.kernel = id;
  c.dst = args.buffers.find("dst")->second.data;
  c.src = args.buffers.find(SourceParam(id))->second.data;
  if (HasScales(id)) c.scales = args.buffers.find("scales")->second.data;
  switch (id) {
    case KernelId::kCastBf16F32:
    case KernelId::kCopy: c.n = at.at("n"); return;
    case KernelId::kFp8BlockBf16:
      c.rows = at.at("rows");
      c.cols = at.at("cols");
      c.block_rows = at.at("block_rows");
      c.block_cols = at.at("block_cols");
      return;
    case KernelId::kMxfp4ExpertsBf16: c.experts = at.at("experts"); [[fallthrough]];
    case KernelId::kMxfp4Dequant:
      c.rows = at.at("rows");
      c.cols = at.at("cols");
      return;
    case KernelId::kMxfp4Fc1Bias: c.shape = Rows(at, true, "i_pad", "", 0); return;
    case KernelId::kMxfp4Fc1Scales: c.shape = Rows(at, true, "i_pad", "k_pad", 32); return;
    case KernelId::kMxfp4Fc1Weight: c.shape = Rows(at, true, "i_pad", "k_pad", 2); return;
    case KernelId::kMxfp4Fc2Bias: c.shape = Rows(at, false, "h_pad", "", 0); return;
    case KernelId::kMxfp4Fc2Scales: c.shape = Rows(at, false, "h_pad", "i_pad", 32); return;
    case KernelId::kMxfp4Fc2Weight: c.shape = Rows(at, false, "h_pad", "i_pad", 2); return;
  }
}

}  // namespace

Resolution Resolve(std::string_view name, const KernelArgs& args) {
  const KernelSpec* k = FindKernel(name);
  if (k == nullptr) return {std::nullopt, Fail(name, "no such derive kernel")};
  if (Status s = CheckBindings(*k, args); !s.ok()) return {std::nullopt, s};
  const expr::Assignment at(args.scalars.begin(), args.scalars.end());
  if (Status s = CheckPreconditions(*k, at); !s.ok()) return {std::nullopt, s};
  std::map<std::string, uint64_t, std::less<>> bytes;
  if (Status s = CheckExtents(*k, args, at, bytes); !s.ok()) return {std::nullopt, s};
  ResolvedCall c;
  Fill(k->id, args, at, c);
  c.src_bytes = bytes[SourceParam(k->id)];
  c.scales_bytes = HasScales(k->id) ? bytes["scales"] : 0;
  c.dst_bytes = bytes["dst"];
  if (Status s = CheckNoOverlap(name, c); !s.ok()) return {std::nullopt, s};
  return {c, Status::Ok()};
}

}  // namespace loadplan::kernels
