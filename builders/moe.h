// Building blocks shared by the MoE examples: the six MXFP4 expert tensors of a
// layer with their derive programs, and the router + MoE serving calls.
#pragma once

#include <cstdint>
#include <string>

#include "verifier/builder.h"

namespace loadplan::builders {

// Expert sizes of one layer. Checkpoint layout: fc1 (gate_up) [E, 2I, H/32, 16]
// FP4 pairs, fc2 (down) [E, H, I/32, 16]; pads are multiples of 128.
struct ExpertDims {
  int64_t experts = 0;
  int64_t hidden = 0;        // H: fc1's input (K) and fc2's output rows
  int64_t intermediate = 0;  // I: fc1 has 2I rows (gate, up interleaved)
  int64_t i_pad = 0, k_pad = 0, h_pad = 0;
};
// Pads I and H up to multiples of `multiple`. Needs H % 32 == 0 and I % 32 == 0
// (MXFP4 groups of 32): returns an error message otherwise.
std::string MakeExpertDims(int64_t experts, int64_t hidden, int64_t intermediate, ExpertDims& out,
                           int64_t multiple = 128);

// "model.layers.<layer>.<suffix>"
std::string LayerTensor(int layer, std::string_view suffix);

// Per family f in fc1_w fc1_s fc1_b fc2_w fc2_s fc2_b: checkpoint tensor
// `<prefix>.<f>.raw` (model.layers.<layer>.mlp.experts.*), carry `<prefix>.<f>`
// and derive program `derive.<prefix>.<f>` of one call (grid [experts]). `exported` marks the
// carries visible to the caller (an imported manifest has no serving program that reads them).
void AddExpertLayer(verifier::ManifestBuilder& b, int layer, const std::string& prefix,
                    const ExpertDims& d, bool exported = false);

// Router weight/bias checkpoint tensors `<prefix>.router_w`, `<prefix>.router_b`.
void AddRouterWeights(verifier::ManifestBuilder& b, int layer, const std::string& prefix,
                      const ExpertDims& d);

// Serving calls of one MoE block: router(x) -> ids/weights, then
// out = residual + moe(x). `tokens` is the scalar expression for the token count.
struct MoeCall {
  std::string prefix;  // buffer prefix of the layer ("l0")
  std::string x, residual, out, ids, weights;
  std::string tokens;
  int64_t top_k = 0;
};
void AddMoeCalls(verifier::ProgramBuilder& p, const MoeCall& c, const ExpertDims& d);

}  // namespace loadplan::builders
