// Chrome Trace Event Format output (trace.json), loadable in Perfetto and chrome://tracing.
//
// One process per traced GPU (named with rank, node and mesh coordinates), one thread
// per stream, a complete event ("ph":"X") per kernel, collective and transfer with
// microsecond timestamps and args (layer, micro-batch, FLOPs, bytes), and a counter
// ("ph":"C") of allocated memory per GPU.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/engine/simulation.h"

namespace meshsim {

// The ranks traced by default: all of them up to kTraceAllRanksUpTo GPUs; beyond that
// one rank per pipeline stage (tp = dp = cp = 0), whose pipeline is replayed anyway, so
// that a trace of a large run stays small enough for a browser (Perfetto UI) to open.
inline constexpr int kTraceAllRanksUpTo = 8;
std::vector<int> DefaultTraceRanks(const Simulation& sim);
std::vector<int> DefaultTraceRanks(const Mesh& mesh);

// Writes the trace of `ranks` (each must have its memory curve recorded for counters).
void WriteChromeTrace(const Simulation& sim, const std::vector<int>& ranks, std::ostream& out);

// The same into the file `path` (written atomically), gzip-compressed when `path` ends in
// ".gz". An I/O failure is an error of kind kIo.
Status WriteChromeTraceFile(const Simulation& sim, const std::vector<int>& ranks,
                            const std::string& path);

}  // namespace meshsim
