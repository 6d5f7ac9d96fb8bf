// What sweep and merge print and write once the rows are in: counts, the fastest
// configurations, the Pareto front (printed and written to pareto.csv), the explorer.
#pragma once

#include <ostream>
#include <string>

#include "sim/core/status.h"
#include "sim/sweep/result_row.h"

namespace meshsim::cli {

// Prints the fastest `top` configurations and the Pareto front of `t`; writes
// OUTDIR/pareto.csv and, if `html` is not empty, the explorer page; an I/O error if a
// file cannot be written.
Status ReportSweep(const ResultTable& t, const std::string& name, const std::string& outdir,
                   const std::string& html, int top, std::ostream& out);

// A table of some rows for people: plan columns that vary, extra axes, results.
void PrintRows(const ResultTable& t, const std::vector<size_t>& rows, std::ostream& out);

// Asks the allocator to keep freed memory for reuse: a sweep runs many simulations of
// similar size one after another, and glibc would otherwise return each one's large
// arrays to the kernel and fault them in again (about 10% of a 530B sweep's time).
void RetainFreedMemory();

}  // namespace meshsim::cli
