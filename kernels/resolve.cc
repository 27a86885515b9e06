// Validation of derive-kernel calls (see resolve.h).
#include "kernels/resolve.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <string>

#include "kernels/contract.h"

namespace loadplan::kernels {
namespace {

constexpr int64_t kMaxExperts = 65535;
constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();
constexpr int64_t kPadMultiple = 128;

// How an mxfp4_* kernel maps its scalars to a RowShape.
struct RowOpSpec {
  std::string_view name;
  Op op;
  bool fc1;
  std::string_view pad_rows;  // i_pad (fc1: 2*i_pad rows) or h_pad
  std::string_view pad_cols;  // k_pad / i_pad; empty for biases
  int64_t col_div;            // elements per padded column count: 2 (weights), 32 (scales)
  uint64_t src_elem;          // bytes per element
  uint64_t dst_elem;
};

constexpr std::array<RowOpSpec, 6> kRowOps = {{
    {"mxfp4_fc1_weight", Op::kFc1Weight, true, "i_pad", "k_pad", 2, 1, 1},
    {"mxfp4_fc1_scales", Op::kFc1Scales, true, "i_pad", "k_pad", 32, 1, 1},
    {"mxfp4_fc1_bias", Op::kFc1Bias, true, "i_pad", "", 0, 2, 4},
    {"mxfp4_fc2_weight", Op::kFc2Weight, false, "h_pad", "i_pad", 2, 1, 1},
    {"mxfp4_fc2_scales", Op::kFc2Scales, false, "h_pad", "i_pad", 32, 1, 1},
    {"mxfp4_fc2_bias", Op::kFc2Bias, false, "h_pad", "", 0, 2, 4},
}};

Status Fail(std::string_view kernel, const std::string& what) {
  return Status::Error(std::string(kernel) + ": " + what);
}

std::optional<int64_t> Mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Every contract parameter bound with the right kind; no argument outside the contract.
Status CheckBindings(const KernelContract& k, const KernelArgs& args) {
  for (const ParamContract& p : k.params) {
    const bool scalar = p.access == "scalar";
    if (scalar ? !args.scalars.contains(p.name) : !args.buffers.contains(p.name)) {
      return Fail(k.name, "missing " + std::string(scalar ? "scalar" : "buffer") + " argument `" + p.name + "`");
    }
  }
  for (const auto& [name, b] : args.buffers) {
    const ParamContract* p = FindParam(k, name);
    if (p == nullptr || p->access == "scalar") return Fail(k.name, "no buffer parameter `" + name + "`");
  }
  for (const auto& [name, v] : args.scalars) {
    const ParamContract* p = FindParam(k, name);
    if (p == nullptr || p->access != "scalar") return Fail(k.name, "no scalar parameter `" + name + "`");
    if (v < 0) return Fail(k.name, name + " = " + std::to_string(v) + " is negative");
  }
  return Status::Ok();
}

// The buffer `param` holds `elems` elements of `elem` bytes; sets *bytes.
Status CheckBuffer(std::string_view kernel, const KernelArgs& args, const std::string& param, int64_t elems,
                   uint64_t elem, uint64_t* bytes) {
  const BufferArg& b = args.buffers.find(param)->second;
  const std::optional<int64_t> need = Mul(elems, static_cast<int64_t>(elem));
  if (!need) return Fail(kernel, param + " extent overflows 64 bits");
  *bytes = static_cast<uint64_t>(*need);
  if (b.bytes < *bytes) {
    return Fail(kernel, param + " needs " + std::to_string(*bytes) + " bytes, the buffer has " +
                            std::to_string(b.bytes));
  }
  if (*bytes > 0 && b.data == nullptr) return Fail(kernel, param + " is a null pointer");
  return Status::Ok();
}

bool Overlap(const void* a, uint64_t a_bytes, const void* b, uint64_t b_bytes) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return a_bytes > 0 && b_bytes > 0 && x < y + b_bytes && y < x + a_bytes;
}

Status CheckNoOverlap(std::string_view kernel, const ResolvedCall& c) {
  if (Overlap(c.src, c.src_bytes, c.dst, c.dst_bytes)) return Fail(kernel, "a read buffer overlaps dst");
  if (Overlap(c.scales, c.scales_bytes, c.dst, c.dst_bytes)) return Fail(kernel, "a read buffer overlaps dst");
  return Status::Ok();
}

Status CheckPad(std::string_view kernel, std::string_view name, int64_t v) {
  if (v % kPadMultiple != 0) {
    return Fail(kernel, std::string(name) + " = " + std::to_string(v) + " is not a multiple of 128");
  }
  return Status::Ok();
}

// Scalars -> RowShape, with every range check of the recipe.
Status MakeRowShape(const RowOpSpec& op, const KernelArgs& args, RowShape* out) {
  const auto get = [&](std::string_view n) { return args.scalars.find(n)->second; };
  const int64_t experts = get("experts"), rows = get("rows"), pad_rows = get(op.pad_rows);
  if (experts > kMaxExperts) return Fail(op.name, "experts = " + std::to_string(experts) + " is over 65535");
  if (Status s = CheckPad(op.name, op.pad_rows, pad_rows); !s.ok()) return s;
  const int64_t out_rows = op.fc1 ? 2 * std::min(pad_rows, kMaxDim) : pad_rows;
  if (out_rows > kMaxDim - kPadMultiple) return Fail(op.name, std::string(op.pad_rows) + " is too large");
  if (op.fc1 && rows % 2 != 0) return Fail(op.name, "rows = " + std::to_string(rows) + " is odd (expected 2I)");
  if ((op.fc1 ? rows / 2 : rows) > pad_rows) {
    return Fail(op.name, "rows = " + std::to_string(rows) + " do not fit " + std::string(op.pad_rows) + " = " +
                             std::to_string(pad_rows));
  }
  int64_t cols = 1, out_cols = 1;
  if (!op.pad_cols.empty()) {
    const int64_t pad_cols = get(op.pad_cols);
    if (Status s = CheckPad(op.name, op.pad_cols, pad_cols); !s.ok()) return s;
    cols = get("cols");
    out_cols = pad_cols / op.col_div;
    if (out_cols > kMaxDim) return Fail(op.name, std::string(op.pad_cols) + " is too large");
    if (cols > out_cols) {
      return Fail(op.name, "cols = " + std::to_string(cols) + " exceed " + std::string(op.pad_cols) + "/" +
                               std::to_string(op.col_div) + " = " + std::to_string(out_cols));
    }
  }
  *out = RowShape{.fc1 = op.fc1, .experts = static_cast<int32_t>(experts), .rows = static_cast<int32_t>(rows),
                  .cols = static_cast<int32_t>(cols), .out_rows = static_cast<int32_t>(out_rows),
                  .out_cols = static_cast<int32_t>(out_cols)};
  return Status::Ok();
}

Status ResolveRowOp(const RowOpSpec& op, const KernelArgs& args, ResolvedCall* c) {
  c->op = op.op;
  if (Status s = MakeRowShape(op, args, &c->shape); !s.ok()) return s;
  const RowShape& r = c->shape;
  const int64_t src_elems = int64_t{r.experts} * r.rows * r.cols;  // each < 2^31: no overflow
  const std::optional<int64_t> dst_elems = Mul(int64_t{r.experts} * r.out_rows, r.out_cols);
  if (!dst_elems) return Fail(op.name, "dst extent overflows 64 bits");
  if (Status s = CheckBuffer(op.name, args, "src", src_elems, op.src_elem, &c->src_bytes); !s.ok()) return s;
  return CheckBuffer(op.name, args, "dst", *dst_elems, op.dst_elem, &c->dst_bytes);
}

Status ResolveFlatOp(std::string_view name, const KernelArgs& args, ResolvedCall* c) {
  const bool cast = name == "cast_bf16_f32";
  c->op = cast ? Op::kCast : Op::kCopy;
  c->n = args.scalars.find("n")->second;
  if (Status s = CheckBuffer(name, args, "src", c->n, cast ? 2 : 1, &c->src_bytes); !s.ok()) return s;
  return CheckBuffer(name, args, "dst", c->n, cast ? 4 : 1, &c->dst_bytes);
}

// mxfp4_dequant: rows x cols elements; blocks and scales in the checkpoint layout.
Status ResolveDequant(std::string_view name, const KernelArgs& args, ResolvedCall* c) {
  c->op = Op::kDequant;
  c->n = args.scalars.find("rows")->second;
  c->cols = args.scalars.find("cols")->second;
  c->src = args.buffers.find("blocks")->second.data;
  c->scales = args.buffers.find("scales")->second.data;
  if (c->cols % 32 != 0) return Fail(name, "cols = " + std::to_string(c->cols) + " is not a multiple of 32");
  const std::optional<int64_t> elems = Mul(c->n, c->cols);
  if (!elems) return Fail(name, "rows*cols overflows 64 bits");
  if (Status s = CheckBuffer(name, args, "blocks", *elems / 2, 1, &c->src_bytes); !s.ok()) return s;
  if (Status s = CheckBuffer(name, args, "scales", *elems / 32, 1, &c->scales_bytes); !s.ok()) return s;
  return CheckBuffer(name, args, "dst", *elems, 2, &c->dst_bytes);
}

}  // namespace

Resolution Resolve(std::string_view name, const KernelArgs& args) {
  const KernelContract* k = FindContract(name);
  if (k == nullptr) return {std::nullopt, Fail(name, "no such derive kernel")};
  if (Status s = CheckBindings(*k, args); !s.ok()) return {std::nullopt, s};
  ResolvedCall c;
  c.dst = args.buffers.find("dst")->second.data;
  Status s = Status::Ok();
  const RowOpSpec* row_op = nullptr;
  for (const RowOpSpec& op : kRowOps) {
    if (op.name == name) row_op = &op;
  }
  if (name == "mxfp4_dequant") {
    s = ResolveDequant(name, args, &c);
  } else {
    c.src = args.buffers.find("src")->second.data;
    s = row_op != nullptr ? ResolveRowOp(*row_op, args, &c) : ResolveFlatOp(name, args, &c);
  }
  if (s.ok()) s = CheckNoOverlap(name, c);
  if (!s.ok()) return {std::nullopt, s};
  return {c, Status::Ok()};
}

}  // namespace loadplan::kernels
