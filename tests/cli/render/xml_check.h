// A tiny, strict XML reader for the renderer tests: checks well-formedness (balanced
// tags, quoted attributes, known entities, no stray '<' or control characters, one root)
// and returns the elements with their unescaped attributes and text.
#pragma once

#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace loadplan::render::testing {

struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::string text;              // direct character data, unescaped
  std::optional<size_t> parent;  // index into XmlDoc::elements
};
struct XmlDoc {
  std::vector<XmlElement> elements;  // document order
  std::string error;                 // empty: well-formed
};

namespace detail {

inline bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '-' ||
         c == '.';
}

inline void AppendUtf8(unsigned long cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Appends the unescaped form of s to out; false on an unknown entity, '<' or a control char.
inline bool Unescape(std::string_view s, std::string& out) {
  static const std::map<std::string, std::string> kEntities{
      {"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"}};
  for (size_t i = 0; i < s.size(); ++i) {
    const auto u = static_cast<unsigned char>(s[i]);
    if (s[i] == '<' || (u < 0x20 && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')) return false;
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    const size_t semi = s.find(';', i);
    if (semi == std::string_view::npos) return false;
    const std::string ent(s.substr(i + 1, semi - i - 1));
    if (auto it = kEntities.find(ent); it != kEntities.end()) {
      out += it->second;
    } else if (ent.size() > 1 && ent[0] == '#') {
      const bool hex = ent[1] == 'x';
      const std::string digits = ent.substr(hex ? 2 : 1);
      if (digits.empty() || digits.size() > 8 ||
          digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") !=
              std::string::npos) {
        return false;
      }
      const unsigned long cp = std::stoul(digits, nullptr, hex ? 16 : 10);
      if (cp == 0 || cp > 0x10FFFF || (cp < 0x20 && cp != 0x9 && cp != 0xA && cp != 0xD))
        return false;
      AppendUtf8(cp, out);
    } else {
      return false;
    }
    i = semi;
  }
  return true;
}

}  // namespace detail

inline XmlDoc ParseXml(std::string_view d) {
  XmlDoc doc;
  std::vector<size_t> open;
  size_t roots = 0, i = 0;
  auto fail = [&](std::string what) {
    doc.error = what + " at byte " + std::to_string(i);
    return doc;
  };
  while (i < d.size()) {
    if (d[i] != '<') {
      const size_t next = std::min(d.find('<', i), d.size());
      std::string text;
      if (!detail::Unescape(d.substr(i, next - i), text)) return fail("bad character data");
      if (open.empty() && text.find_first_not_of(" \t\r\n") != std::string::npos)
        return fail("text outside root");
      if (!open.empty()) doc.elements[open.back()].text += text;
      i = next;
      continue;
    }
    if (i + 1 >= d.size()) return fail("unterminated markup");
    if (d.substr(i, 4) == "<!--" || d.substr(i, 2) == "<?" || d.substr(i, 2) == "<!") {
      const std::string_view end = d.substr(i, 4) == "<!--" ? "-->" : d[i + 1] == '?' ? "?>" : ">";
      const size_t e = d.find(end, i);
      if (e == std::string_view::npos) return fail("unterminated markup");
      i = e + end.size();
      continue;
    }
    const bool closing = d[i + 1] == '/';
    size_t p = i + (closing ? 2 : 1), start = p;
    while (p < d.size() && detail::IsNameChar(d[p])) ++p;
    if (p == start) return fail("missing tag name");
    const std::string name(d.substr(start, p - start));
    if (closing) {
      while (p < d.size() && std::isspace(static_cast<unsigned char>(d[p]))) ++p;
      if (p >= d.size() || d[p] != '>') return fail("bad end tag");
      if (open.empty() || doc.elements[open.back()].name != name)
        return fail("mismatched </" + name + ">");
      open.pop_back();
      i = p + 1;
      continue;
    }
    XmlElement el;
    el.name = name;
    if (!open.empty()) el.parent = open.back();
    if (open.empty() && ++roots > 1) return fail("second root element");
    for (;;) {
      while (p < d.size() && std::isspace(static_cast<unsigned char>(d[p]))) ++p;
      if (p >= d.size()) return fail("unterminated tag");
      if (d[p] == '>' || d.substr(p, 2) == "/>") break;
      start = p;
      while (p < d.size() && detail::IsNameChar(d[p])) ++p;
      if (p == start || p + 1 >= d.size() || d[p] != '=' || (d[p + 1] != '"' && d[p + 1] != '\'')) {
        return fail("bad attribute in <" + name + ">");
      }
      const std::string attr(d.substr(start, p - start));
      const size_t close = d.find(d[p + 1], p + 2);
      if (close == std::string_view::npos) return fail("unterminated attribute");
      std::string value;
      if (!detail::Unescape(d.substr(p + 2, close - p - 2), value))
        return fail("bad attribute value");
      if (!el.attrs.emplace(attr, value).second) return fail("duplicate attribute " + attr);
      p = close + 1;
    }
    const bool self_closing = d[p] == '/';
    doc.elements.push_back(std::move(el));
    if (!self_closing) open.push_back(doc.elements.size() - 1);
    i = p + (self_closing ? 2 : 1);
  }
  if (!open.empty()) return fail("unclosed <" + doc.elements[open.back()].name + ">");
  if (roots != 1) return fail("no root element");
  return doc;
}

}  // namespace loadplan::render::testing
