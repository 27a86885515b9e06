// DumpJson: the one way the commands serialise JSON.
#include "cli/json_out.h"

#include <nlohmann/json.hpp>

namespace loadplan::cli {

std::string DumpJson(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace loadplan::cli
