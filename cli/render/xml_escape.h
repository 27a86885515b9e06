// XML escaping for the SVG and Graphviz HTML-label writers.
#pragma once

#include <string>
#include <string_view>

namespace loadplan::render {

// Escapes &, <, >, " and ' for XML text and attribute values. Control characters
// other than tab and newline (not allowed in XML 1.0) become a visible "\xNN".
std::string XmlEscape(std::string_view s);

}  // namespace loadplan::render
