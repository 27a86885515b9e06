// A SAX reader building nlohmann::json with first-wins duplicate keys.
#include "fuzz/first_wins_json.h"

#include <string>
#include <vector>

namespace loadplan::fuzz {
namespace {

using nlohmann::json;

class FirstWins final : public nlohmann::json_sax<json> {
 public:
  json root;

  bool null() override { return Put(nullptr); }
  bool boolean(bool v) override { return Put(v); }
  bool number_integer(number_integer_t v) override { return Put(v); }
  bool number_unsigned(number_unsigned_t v) override { return Put(v); }
  bool number_float(number_float_t v, const string_t&) override { return Put(v); }
  bool string(string_t& v) override { return Put(v); }
  bool binary(binary_t& v) override { return Put(json::binary(v)); }
  bool start_object(std::size_t) override { return Open(json::object()); }
  bool start_array(std::size_t) override { return Open(json::array()); }
  bool end_object() override { return Close(); }
  bool end_array() override { return Close(); }
  bool key(string_t& k) override {
    if (skip_ == 0) {
      key_ = k;
      dup_ = stack_.back()->contains(k);
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  // Where the next value goes, or nullptr when it is dropped (a repeated key's value).
  json* Slot() {
    if (stack_.empty()) return &root;
    json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(nullptr);
      return &top.back();
    }
    return dup_ ? nullptr : &top[key_];
  }
  bool Put(json v) {
    if (skip_ > 0) return true;
    if (json* slot = Slot()) *slot = std::move(v);
    return true;
  }
  bool Open(json v) {
    if (skip_ > 0) return ++skip_, true;
    json* slot = Slot();
    if (slot == nullptr) return skip_ = 1, true;
    *slot = std::move(v);
    stack_.push_back(slot);
    return true;
  }
  bool Close() {
    if (skip_ > 0) return --skip_, true;
    stack_.pop_back();
    return true;
  }

  std::vector<json*> stack_;
  std::string key_;
  bool dup_ = false;
  int skip_ = 0;  // depth inside a dropped container
};

}  // namespace

std::optional<json> ParseFirstWins(std::string_view text) {
  FirstWins sax;
  if (!json::sax_parse(text.begin(), text.end(), &sax)) return std::nullopt;
  return std::move(sax.root);
}

bool PointerResolves(const json& doc, const std::string& pointer) {
  try {
    return doc.contains(json::json_pointer(pointer));
  } catch (const json::exception&) {
    return false;
  }
}

}  // namespace loadplan::fuzz
