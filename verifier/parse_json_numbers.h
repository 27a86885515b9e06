// Numbers that are valid JSON but overflow a double ("1e309", 309+ digit integers): nlohmann's
// lexer rejects them (out_of_range.406), so they are masked before a second parse.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <string_view>

namespace loadplan::verifier::json {

// What a masked overflowing number reads as: a float token the lexer accepts.
inline constexpr std::string_view kMaskedNumber = "0e0";

// The original text of each kMaskedNumber token of the masked text, in document order:
// nullopt for a "0e0" that was in the input, the overflowing literal for a masked one.
using MaskedNumbers = std::deque<std::optional<std::string>>;

// `text` with every overflowing number token outside strings replaced by kMaskedNumber padded
// with spaces (so byte offsets, lines and columns stay), and the originals in `originals`;
// nullopt when there is none. One pass over the text. Malformed number tokens stay as they are
// (the parser reports them).
std::optional<std::string> MaskOverflowingNumbers(std::string_view text, MaskedNumbers& originals);

}  // namespace loadplan::verifier::json
