// tiny: the staged-load story on one screen. Two MXFP4 sources are dequantised by
// one derive call into one carry (tied embedding / output table); one weight, one
// state, one serving program.
#include "examples/examples.h"
#include "builders/kernels.h"

namespace loadplan::examples {

verifier::BuildResult Tiny() {
  using base::Dtype;
  constexpr int64_t kVocab = 64, kHidden = 32;
  verifier::ManifestBuilder b("tiny");
  b.Var("batch", 1, 8).Load(1, 0);
  builders::AddStandardKernels(b, {"mxfp4_dequant", "embedding", "rmsnorm", "lm_head"});
  b.Checkpoint("w.blocks", "embed.blocks", Dtype::kU8, {kVocab, kHidden / 32, 16},
               {.encoding = "fp4_e2m1x2"});
  b.Checkpoint("w.scales", "embed.scales", Dtype::kU8, {kVocab, kHidden / 32},
               {.encoding = "e8m0"});
  b.Checkpoint("norm", "norm.weight", Dtype::kBF16, {kHidden});
  b.Carry("w", Dtype::kBF16, {kVocab, kHidden});
  b.State("h", Dtype::kBF16, {"batch", kHidden});
  b.Input("tokens", Dtype::kI32, {"batch"});
  b.Output("logits", Dtype::kF32, {"batch", kVocab}, {.exported = true});
  b.AddDerive("derive.w")
      .Call("mxfp4_dequant",
            {{"blocks", "w.blocks"},
             {"scales", "w.scales"},
             {"dst", "w"},
             {"rows", kVocab},
             {"cols", kHidden}},
            {kVocab});
  b.AddProgram("step")
      .Batch("batch")
      .Call("embedding",
            {{"table", "w"},
             {"ids", "tokens"},
             {"out", "h"},
             {"tokens", "batch"},
             {"vocab", kVocab},
             {"hidden", kHidden}},
            {"batch"})
      .Call(
          "rmsnorm",
          {{"x", "h"}, {"weight", "norm"}, {"out", "h"}, {"tokens", "batch"}, {"hidden", kHidden}},
          {"batch"})
      .Call("lm_head",
            {{"x", "h"},
             {"weight", "w"},
             {"logits", "logits"},
             {"tokens", "batch"},
             {"hidden", kHidden},
             {"vocab", kVocab}},
            {"batch"});
  return b.Build();
}

}  // namespace loadplan::examples
