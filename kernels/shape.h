// The checked shape of an MXFP4 row-prep call, shared by host code and the
// CUDA launchers (plain C++20, <cstdint> only).
#pragma once

#include <cstdint>

namespace loadplan::kernels {

// Per expert, `rows` checkpoint rows of `cols` elements become `out_rows` rows of
// `out_cols` elements (fc1: the up/gate recipe; fc2: pad and shuffle). Elements
// are bytes for weights and scales, one BF16 -> F32 value for biases (cols = 1).
struct RowShape {
  bool fc1 = false;
  int32_t experts = 0;
  int32_t rows = 0;      // fc1: 2I (even); fc2: H
  int32_t cols = 0;      // <= out_cols
  int32_t out_rows = 0;  // fc1: 2*i_pad; fc2: h_pad; a multiple of 128
  int32_t out_cols = 0;  // weights: pad/2; scales: pad/32 (a multiple of 4); biases: 1
  bool operator==(const RowShape&) const = default;
};

}  // namespace loadplan::kernels
