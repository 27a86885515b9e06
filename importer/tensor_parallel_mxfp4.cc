// SplitMxfp4Calls: gpt-oss's expert prep sized for one tensor-parallel rank (tensor_parallel.h).
#include "importer/tensor_parallel.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "verifier/expr.h"

namespace loadplan::importer {
namespace {

// The six prep kernels (builders/moe.cc's families) and how a rank's slice resizes each call:
// fc1 tensors [E, 2I, ...] are sliced by intermediate rows on dim 1 (2 rows an intermediate
// index), fc2 tensors [E, H, I/32, ...] by intermediate blocks on dim 2 (32 an index); the down
// bias [E, H] is whole. Ratios are numerator / denominator pairs.
struct PrepRule {
  std::string_view kernel;
  int64_t i_num, i_den;   // intermediate indices per unit of the sliced extent (fc1 1/2, fc2 32)
  std::string_view size;  // the scalar that carries the sliced extent ("rows" / "cols")
  int64_t size_per_extent;
  size_t pad_dim;            // the carry's dim that holds the padded intermediate
  int64_t pad_num, pad_den;  // its extent per padded index (fc1 2 rows, fc2 1/2 byte, 1/32)
};

constexpr PrepRule kRules[] = {
    {"mxfp4_fc1_weight", 1, 2, "rows", 1, 1, 2, 1},
    {"mxfp4_fc1_scales", 1, 2, "rows", 1, 1, 2, 1},
    {"mxfp4_fc1_bias", 1, 2, "rows", 1, 1, 2, 1},
    {"mxfp4_fc2_weight", 32, 1, "cols", 16, 2, 1, 2},
    {"mxfp4_fc2_scales", 32, 1, "cols", 1, 2, 1, 32},
};

const PrepRule* RuleOf(std::string_view kernel) {
  for (const PrepRule& r : kRules) {
    if (r.kernel == kernel) return &r;
  }
  return nullptr;
}

constexpr int64_t kPadMultiple = 128;  // builders::MakeExpertDims's default, as the full import

int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

void SetScalar(verifier::Call& call, std::string_view param, int64_t value) {
  for (verifier::Arg& a : call.args) {
    if (a.param == param) a.scalar = verifier::Expr::Const(value);
  }
}

// One prep call resized for the rank's slice of its source: the sliced extent, the padded
// intermediate and the carry's padded dim.
base::Status ResizeCall(verifier::Call& call, const PrepRule& rule,
                        std::map<std::string, verifier::Buffer*>& buffers) {
  const verifier::Arg* src = verifier::FindArg(call, "src");
  const verifier::Arg* dst = verifier::FindArg(call, "dst");
  const auto find = [&buffers](const verifier::Arg* a) -> verifier::Buffer* {
    const auto it = a && a->buffer ? buffers.find(*a->buffer) : buffers.end();
    return it == buffers.end() ? nullptr : it->second;
  };
  verifier::Buffer* s = find(src);
  verifier::Buffer* d = find(dst);
  if (s == nullptr || d == nullptr || d->shape.size() <= rule.pad_dim) {
    return base::Status::Error(
        fmt::format("{}: {} does not bind a source and a carry as the gpt-oss recipe makes them",
                    call.ptr, call.kernel),
        base::ErrorKind::kInternal);
  }
  if (!s->slice) return base::Status::Ok();  // not split (tensor parallel 1): as imported
  const auto extent = static_cast<int64_t>(s->slice->length);
  const int64_t i = extent * rule.i_num / rule.i_den;
  const int64_t i_pad = RoundUp(i, kPadMultiple);
  SetScalar(call, rule.size, extent * rule.size_per_extent);
  SetScalar(call, "i_pad", i_pad);
  d->shape[rule.pad_dim] = verifier::Expr::Const(i_pad * rule.pad_num / rule.pad_den);
  return base::Status::Ok();
}

}  // namespace

base::Status SplitMxfp4Calls(verifier::Manifest& m) {
  std::map<std::string, verifier::Buffer*> buffers;
  for (verifier::Buffer& b : m.buffers) buffers[b.name] = &b;
  for (verifier::Program& p : m.programs) {
    if (!p.derive) continue;  // serving programs bind no checkpoint slice
    for (verifier::Call& call : p.calls) {
      if (call.type != verifier::CallType::kKernel || call.kernel == "mxfp4_fc2_bias") continue;
      const PrepRule* rule = RuleOf(call.kernel);
      if (rule == nullptr) {
        return base::Status::Error(fmt::format(
            "--tensor-parallel splits the gpt-oss recipe's expert prep (or no derive program); "
            "{} calls {}, sized for whole tensors: import with --recipe none or mxfp4-gpt-oss",
            call.ptr, call.kernel));
      }
      if (base::Status st = ResizeCall(call, *rule, buffers); !st.ok()) return st;
    }
  }
  return base::Status::Ok();
}

}  // namespace loadplan::importer
