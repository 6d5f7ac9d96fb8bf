#include "sim/workload/param_count.h"

#include "sim/workload/transformer.h"

namespace meshsim {

bool IsMoeLayer(const ModelSpec& m, int layer) { return m.IsMoeLayer(layer); }

int MoeLayerCount(const ModelSpec& m) {
  int n = 0;
  for (int i = 0; i < m.layers; ++i) n += m.IsMoeLayer(i) ? 1 : 0;
  return n;
}

int64_t ExpertFfnHidden(const ModelSpec& m) { return m.ExpertFfnHidden(); }

ParamCount CountParams(const ModelSpec& m) { return ParamCount{TotalParams(m), ActiveParams(m)}; }

}  // namespace meshsim
