#include "sim/schedule/pipeline_order.h"

#include <algorithm>
#include <cassert>

namespace meshsim {
namespace {

std::vector<PipelineStep> Gpipe(int m) {
  std::vector<PipelineStep> steps;
  for (int k = 0; k < m; ++k) steps.push_back({true, 0, k});
  for (int k = 0; k < m; ++k) steps.push_back({false, 0, k});
  return steps;
}

// Interleaves `warmup` forwards, then forward/backward pairs, then the rest of the
// backwards; forward(i) and backward(i) map a virtual index to (chunk, micro-batch).
template <typename F, typename B>
std::vector<PipelineStep> OneFOneB(int total, int warmup, F forward, B backward) {
  std::vector<PipelineStep> steps;
  steps.reserve(2 * total);
  for (int i = 0; i < warmup; ++i) steps.push_back(forward(i));
  for (int i = 0; i < total - warmup; ++i) {
    steps.push_back(forward(warmup + i));
    steps.push_back(backward(i));
  }
  for (int i = total - warmup; i < total; ++i) steps.push_back(backward(i));
  return steps;
}

}  // namespace

std::vector<PipelineStep> StageOrder(ScheduleKind kind, int pp, int v, int m, int stage,
                                     int extra_warmup) {
  assert(stage >= 0 && stage < pp && m >= 1);
  switch (kind) {
    case ScheduleKind::kGpipe:
      return Gpipe(m);
    case ScheduleKind::kOneFOneB: {
      const int warmup = std::min(pp - stage - 1, m);
      auto fwd = [](int i) { return PipelineStep{true, 0, i}; };
      auto bwd = [](int i) { return PipelineStep{false, 0, i}; };
      return OneFOneB(m, warmup, fwd, bwd);
    }
    case ScheduleKind::kInterleaved: {
      assert(m % pp == 0);
      const int total = m * v;
      const int warmup =
          m == pp ? total : std::min((pp - stage - 1) * 2 + (v - 1) * pp + extra_warmup, total);
      auto micro_batch = [pp, v](int i) { return (i / (pp * v)) * pp + i % pp; };
      auto fwd = [=](int i) { return PipelineStep{true, (i % (pp * v)) / pp, micro_batch(i)}; };
      auto bwd = [=](int i) {
        return PipelineStep{false, v - 1 - (i % (pp * v)) / pp, micro_batch(i)};
      };
      return OneFOneB(total, warmup, fwd, bwd);
    }
  }
  return {};
}

}  // namespace meshsim
