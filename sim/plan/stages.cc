#include "sim/plan/stages.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstdint>
#include <cstdlib>

namespace meshsim {
namespace {

std::string N(long long v) { return std::to_string(v); }

std::string Entry(size_t i) { return "plan.stage_layers[" + N(static_cast<long long>(i)) + "]"; }

// "pp*virtual_stages = 4*2 = 8 entries (virtual-stage order)" or "pp = 4 entries".
std::string ExpectedEntries(const PlanSpec& p, int64_t n) {
  if (p.virtual_stages == 1) return "pp = " + N(n) + " entries";
  return "pp*virtual_stages = " + N(p.pp) + "*" + N(p.virtual_stages) + " = " + N(n) +
         " entries (virtual-stage order: chunk c of stage s at c*pp + s)";
}

Status CheckList(const PlanSpec& p, const ModelSpec& m) {
  const std::vector<int>& list = p.stage_layers;
  const int64_t n = int64_t{p.pp} * p.virtual_stages;
  if (static_cast<int64_t>(list.size()) > n) {
    return BadKey(Entry(static_cast<size_t>(n)),
                  "expected " + ExpectedEntries(p, n) + ", found " + N(list.size()));
  }
  if (static_cast<int64_t>(list.size()) < n) {
    return BadKey(Entry(list.size() - 1),
                  "expected " + ExpectedEntries(p, n) + ", found " + N(list.size()));
  }
  int64_t sum = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i] < 0)
      return BadKey(Entry(i), "expected a number of layers >= 0, found " + N(list[i]));
    sum += list[i];
    if (sum > m.layers) {
      return BadKey(Entry(i), "the entries up to here sum to " + N(sum) +
                                  ", more than the model's layers = " + N(m.layers));
    }
  }
  if (sum < m.layers) {
    return BadKey(Entry(list.size() - 1), "the entries sum to " + N(sum) +
                                              ", fewer than the model's layers = " + N(m.layers));
  }
  return Ok{};
}

}  // namespace

std::optional<std::vector<int>> AccountedStageLayers(int layers, int n, int embedding_units,
                                                     int loss_units) {
  assert(n >= 1 && layers >= 0);
  const int64_t units = int64_t{layers} + embedding_units + loss_units;
  std::vector<int> out(n, static_cast<int>(units / n));
  for (int64_t i = 0; i < units % n; ++i) ++out[i];
  out.front() -= embedding_units;
  out.back() -= loss_units;
  if (*std::min_element(out.begin(), out.end()) < 0) return std::nullopt;
  return out;
}

std::optional<std::vector<int>> DefaultStageLayers(int layers, int pp, int virtual_stages) {
  const int64_t n = int64_t{pp} * virtual_stages;
  if (n > int64_t{layers} + 2) return std::nullopt;
  if (layers % n == 0) return std::vector<int>(n, static_cast<int>(layers / n));
  return AccountedStageLayers(layers, static_cast<int>(n), 1, 1);
}

Status CheckStageLayers(const PlanSpec& p, const ModelSpec& m) {
  if (!p.stage_layers.empty()) return CheckList(p, m);
  const int64_t n = int64_t{p.pp} * p.virtual_stages;
  if (n <= int64_t{m.layers} + 2) return Ok{};
  return BadKey("plan.pp",
                "pp*virtual_stages = " + N(p.pp) + "*" + N(p.virtual_stages) + " = " + N(n) +
                    " virtual stages are more than the model's layers + 2 = " + N(m.layers + 2) +
                    " (the embedding and the loss counted as a layer each): the default split "
                    "has no layer for some of them; give plan.stage_layers to place empty stages");
}

std::string StageLayersText(const std::vector<int>& stage_layers) {
  std::string s;
  for (size_t i = 0; i < stage_layers.size(); ++i) {
    if (i) s += '/';
    s += std::to_string(stage_layers[i]);
  }
  return s;
}

bool ParseStageLayersText(const std::string& text, std::vector<int>* out) {
  out->clear();
  if (text.empty()) return true;
  size_t start = 0;
  while (true) {
    const size_t slash = text.find('/', start);
    const std::string item = text.substr(start, slash - start);
    if (item.empty() || item.size() > 9 ||
        !std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return false;
    }
    out->push_back(std::atoi(item.c_str()));
    if (slash == std::string::npos) return true;
    start = slash + 1;
  }
}

StageSplit::StageSplit(const PlanSpec& plan, const ModelSpec& model) : pp_(plan.pp) {
  std::vector<int> layers = plan.stage_layers;
  if (layers.empty())
    layers = DefaultStageLayers(model.layers, plan.pp, plan.virtual_stages).value();
  assert(static_cast<int64_t>(layers.size()) == int64_t{plan.pp} * plan.virtual_stages);
  first_.assign(layers.size() + 1, 0);
  for (size_t i = 0; i < layers.size(); ++i) {
    first_[i + 1] = first_[i] + layers[i];
    even_ = even_ && layers[i] == layers[0];
  }
  assert(first_.back() == model.layers);
}

}  // namespace meshsim
