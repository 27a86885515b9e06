// Reading config.json's keys with the file's path in every message: the first problem is kept,
// the rest of the read goes on so one call reports it (hf_config.cc, hf_cache_config.cc).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "importer/hf_config.h"

namespace loadplan::importer {

// Upper bounds of config integers: widths and counts of dims (2^20), vocabulary and positions
// (2^26: Llama 4's 10M context fits), layers, experts (a CUDA grid dimension).
inline constexpr int64_t kMaxDim = int64_t{1} << 20;
inline constexpr int64_t kMaxLong = int64_t{1} << 26;
inline constexpr int64_t kMaxLayers = 4096;
inline constexpr int64_t kMaxExperts = 65535;

class ConfigReader {
 public:
  ConfigReader(const std::string& path, const nlohmann::json& doc) : path_(path), doc_(doc) {}

  // The first of `keys` that is present and not null; nullptr when none is.
  [[nodiscard]] const nlohmann::json* Find(std::initializer_list<const char*> keys) const;
  // An integer in [min, max] under the first present key; `fallback` when none is present and
  // a fallback is given, else an error naming the first key. The bounds keep every product the
  // import forms (shapes, bytes per token) far inside int64 and every loop short.
  int64_t Int(std::initializer_list<const char*> keys, int64_t min,
              std::optional<int64_t> fallback = std::nullopt, int64_t max = kMaxDim);
  // As Int, but nullopt (no error) when no key is present.
  std::optional<int64_t> OptionalInt(std::initializer_list<const char*> keys, int64_t min,
                                     int64_t max = kMaxDim);
  bool Bool(const char* key, bool fallback);
  std::string String(std::initializer_list<const char*> keys);

  void Fail(std::string what);
  [[nodiscard]] const base::Status& error() const { return error_; }
  [[nodiscard]] const nlohmann::json& doc() const { return doc_; }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  // The key that is present among `keys` (for a message), else the first.
  [[nodiscard]] const char* KeyOf(std::initializer_list<const char*> keys) const;
  const std::string& path_;
  const nlohmann::json& doc_;
  base::Status error_;
};

// The per-layer cache kinds (HfConfig::layer_cache) and the state geometry, after the core
// keys are read (hf_cache_config.cc).
void ReadCacheGeometry(ConfigReader& r, HfConfig& c);

}  // namespace loadplan::importer
