// JSON output of the commands: indented, and total over file names from argv (invalid UTF-8
// is replaced by U+FFFD instead of throwing nlohmann's type_error.316).
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace loadplan::cli {

// j.dump(2) with error_handler_t::replace.
std::string DumpJson(const nlohmann::json& j);

}  // namespace loadplan::cli
