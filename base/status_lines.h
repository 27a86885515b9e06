// Checks that report every problem at once return one Status whose message lists them, one
// per line, in order, and which carries them as a list (Status::problems): these build such a
// status and give its problems back (the list; a message's lines for a status made elsewhere).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace loadplan::base {

// Ok when `problems` is empty; else one error of `kind` listing every problem, one per line,
// in the order given.
Status StatusFromLines(const std::vector<std::string>& problems,
                       ErrorKind kind = ErrorKind::kInvalidInput);
// The problems of a status made by StatusFromLines (empty when ok).
std::vector<std::string> StatusLines(const Status& status);

}  // namespace loadplan::base
