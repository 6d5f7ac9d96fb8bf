#include "sim/core/expert_routing.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <numbers>
#include <numeric>
#include <random>
#include <tuple>

namespace meshsim {
namespace {

constexpr int kSampledTokens = 4096;

// The probability that k experts drawn without replacement from `pool` miss all `held` of
// them: C(pool - held, k) / C(pool, k).
double MissAll(int pool, int held, int k) {
  double p = 1;
  for (int i = 0; i < k; ++i) {
    if (pool - held - i <= 0) return 0;
    p *= static_cast<double>(pool - held - i) / (pool - i);
  }
  return p;
}

// A standard normal draw (Box-Muller, one of the pair), the same on every run.
double Normal(std::mt19937_64& gen) {
  constexpr double kUnit = 1.0 / 9007199254740992.0;  // 2^-53
  const double u1 = (static_cast<double>(gen() >> 11) + 0.5) * kUnit;
  const double u2 = static_cast<double>(gen() >> 11) * kUnit;
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
}

// One token's top_k experts under Megatron-Core's group_limited_topk, into `out`.
void RouteToken(const ExpertRouting& r, std::mt19937_64& gen, std::vector<double>& score,
                std::vector<int>& order, std::vector<int>* out) {
  for (double& s : score) s = 1 / (1 + std::exp(-Normal(gen)));
  const int per = r.experts / r.groups, best = std::max(1, r.top_k / r.group_topk);
  std::vector<double> group(r.groups);
  for (int g = 0; g < r.groups; ++g) {
    std::vector<double> in(score.begin() + g * per, score.begin() + (g + 1) * per);
    std::partial_sort(in.begin(), in.begin() + best, in.end(), std::greater<>());
    group[g] = std::accumulate(in.begin(), in.begin() + best, 0.0);
  }
  std::vector<int> groups(r.groups);
  std::iota(groups.begin(), groups.end(), 0);
  std::partial_sort(groups.begin(), groups.begin() + r.group_topk, groups.end(), [&](int a, int b) {
    return group[a] > group[b] || (group[a] == group[b] && a < b);
  });
  order.clear();
  for (int i = 0; i < r.group_topk; ++i) {
    for (int e = groups[i] * per; e < (groups[i] + 1) * per; ++e) order.push_back(e);
  }
  std::partial_sort(order.begin(), order.begin() + r.top_k, order.end(), [&](int a, int b) {
    return score[a] > score[b] || (score[a] == score[b] && a < b);
  });
  out->insert(out->end(), order.begin(), order.begin() + r.top_k);
}

// The experts kSampledTokens tokens pick (top_k per token, token by token).
std::vector<int> SampleChoices(const ExpertRouting& r) {
  std::mt19937_64 gen(20241227);  // DeepSeek-V3's report, arXiv:2412.19437
  std::vector<double> score(r.experts);
  std::vector<int> order, choices;
  choices.reserve(static_cast<size_t>(kSampledTokens) * r.top_k);
  for (int t = 0; t < kSampledTokens; ++t) RouteToken(r, gen, score, order, &choices);
  return choices;
}

// The fraction of the sampled tokens that reach a unit holding `held`.
double SampledReach(const ExpertRouting& r, const std::vector<int>& choices,
                    std::span<const int> held) {
  const int per = r.experts / r.groups;
  int reached = 0;
  for (size_t t = 0; t < choices.size(); t += r.top_k) {
    // The unit holds the first held[g] experts of group g (they are alike).
    reached += std::any_of(choices.begin() + t, choices.begin() + t + r.top_k,
                           [&](int e) { return e % per < held[e / per]; });
  }
  return static_cast<double>(reached) / kSampledTokens;
}

// Node-limited reach, remembered for the process: the tokens are sampled once per
// routing, each unit's reach counted once (a replay asks for the same few units of every
// expert-parallel group). Thread-safe.
double LimitedReach(const ExpertRouting& r, std::span<const int> held) {
  using Key = std::tuple<int, int, int, int>;
  static std::mutex mu;
  static std::map<Key, std::vector<int>> choices;
  static std::map<std::pair<Key, std::vector<int>>, double> reach;
  const Key key{r.experts, r.top_k, r.groups, r.group_topk};
  const std::lock_guard<std::mutex> lock(mu);
  auto [at, added] = reach.try_emplace({key, std::vector<int>(held.begin(), held.end())}, 0.0);
  if (!added) return at->second;
  std::vector<int>& sample = choices[key];
  if (sample.empty()) sample = SampleChoices(r);
  at->second = SampledReach(r, sample, held);
  return at->second;
}

}  // namespace

ExpertRouting ContiguousRouting(int experts, int top_k) {
  assert(top_k > 0 && experts % top_k == 0);
  return {experts, top_k, experts / top_k, 1, true};
}

double ReachProbability(const ExpertRouting& r, std::span<const int> held) {
  assert(static_cast<int>(held.size()) == r.groups);
  const int total = std::accumulate(held.begin(), held.end(), 0);
  if (total == 0) return 0;
  if (r.contiguous) {
    const auto touched = std::count_if(held.begin(), held.end(), [](int h) { return h > 0; });
    return static_cast<double>(touched) / r.groups;
  }
  if (!r.Limited()) return 1 - MissAll(r.experts, total, r.top_k);
  return LimitedReach(r, held);
}

void AddHeldExperts(const ExpertRouting& r, int first, int count, std::vector<int>* held) {
  assert(r.groups > 0 && r.experts % r.groups == 0);
  held->resize(r.groups, 0);
  const int per_group = r.experts / r.groups;
  for (int e = first; e < first + count; ++e) ++(*held)[e / per_group];
}

double RankReach(const ExpertRouting& r, int ranks) {
  assert(ranks > 0 && r.experts % ranks == 0);
  const int per_rank = r.experts / ranks;
  double sum = 0;
  std::vector<int> held;
  for (int m = 0; m < ranks; ++m) {
    held.assign(r.groups, 0);
    AddHeldExperts(r, m * per_rank, per_rank, &held);
    sum += ReachProbability(r, held);
  }
  return sum / ranks;
}

}  // namespace meshsim
