// The report's fit frontier and its JSON.
#include "api/plan_frontier.h"

namespace loadplan::api {
namespace {

using nlohmann::json;
namespace cap = simulator::capacity;

json PeakJson(const cap::PeakValue& v) {
  json out = {
      {"bytes", v.bytes ? json(*v.bytes) : json(nullptr)}, {"at", v.at}, {"exact", v.exact}};
  if (!v.error.ok()) out["error"] = v.error.message();
  return out;
}

json LimitJson(const cap::Limit& l) {
  return {{"var", l.var},
          {"pinned", l.pinned},
          {"largest", l.largest ? json(*l.largest) : json(nullptr)},
          {"status", cap::LimitStatusName(l.status)},
          {"peak", l.largest ? PeakJson(l.at_largest) : json(nullptr)},
          {"past", l.past ? PeakJson(*l.past) : json(nullptr)}};
}

json KvRowJson(const cap::KvRow& r) {
  return {{"ctx", r.ctx},
          {"max_batch", r.max_batch ? json(*r.max_batch) : json(nullptr)},
          {"tokens", r.tokens ? json(*r.tokens) : json(nullptr)},
          {"status", cap::LimitStatusName(r.status)}};
}

json KvJson(const std::optional<cap::KvCapacity>& kv) {
  if (!kv) return nullptr;
  json rows = json::array();
  for (const cap::KvRow& r : kv->rows) rows.push_back(KvRowJson(r));
  return {{"rows", rows}, {"largest", kv->largest ? KvRowJson(*kv->largest) : json(nullptr)}};
}

}  // namespace

cap::PeakModel PeakModelOf(const verifier::Manifest& m, const PlanReport& r) {
  return cap::PeakModelOf(m, r.phases, r.BudgetBytes().value_or(0));
}

cap::Frontier FrontierOf(const verifier::Manifest& m, const PlanReport& r) {
  cap::FrontierOptions o;
  for (const auto& [name, value] : r.at) o.extra[name].push_back(value);
  return cap::ComputeFrontier(PeakModelOf(m, r), o);
}

std::optional<cap::Frontier> ReportFrontier(const verifier::Manifest& m, const PlanReport& r) {
  if (!r.device_bytes || r.FitsBox().value_or(true)) return std::nullopt;
  return FrontierOf(m, r);
}

json FrontierJson(const std::optional<cap::Frontier>& f) {
  if (!f) return nullptr;
  json tables = json::array(), projections = json::array();
  for (const cap::LimitTable& t : f->tables) {
    json rows = json::array();
    for (const cap::Limit& l : t.rows) rows.push_back(LimitJson(l));
    tables.push_back({{"pinned", t.pinned}, {"solved", t.solved}, {"rows", rows}});
  }
  for (const cap::Limit& l : f->projections) projections.push_back(LimitJson(l));
  return {{"budget", f->budget}, {"fits_nowhere", f->fits_nowhere},
          {"main", f->main},     {"ladders", f->ladders},
          {"tables", tables},    {"projections", projections},
          {"kv", KvJson(f->kv)}};
}

}  // namespace loadplan::api
