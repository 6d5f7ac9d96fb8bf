// The sweep, merge and plan subcommands (exit codes as in commands.h).
#pragma once

#include <string>
#include <vector>

namespace meshsim::cli {

struct SweepArgs {
  std::string sweep;   // sweep YAML
  std::string outdir;  // empty: results/sweeps/<name>
  int threads = 0;     // 0: one per hardware thread
  bool resume = false;
  std::string shard;   // "I/N"; empty: 0/1
  std::string html;    // explorer page; empty: none
  int top = 10;        // rows of the fastest-configurations table
  bool quiet = false;  // no progress bar
};
int Sweep(const SweepArgs& args);

struct MergeArgs {
  std::vector<std::string> inputs;  // shard output folders
  std::string outdir;
  std::string html;
  int top = 10;
};
int Merge(const MergeArgs& args);

struct PlanArgs {
  std::string model;
  std::string cluster;
  int gpus = 0;
  double budget_gib = 0;          // 0: the GPU's memory
  double headroom_gib = 0;        // kept free: a plan must fit in budget - headroom
  std::vector<std::string> sets;  // --set overrides of the base experiment
  int top = 20;                   // rows shown; 0: all
  int global_batch = 0;           // 0: planner default
  int threads = 0;
  std::string html;
  std::string csv;
  bool quiet = false;
  bool jax = false;  // JAX-style plans (sim/sweep/planner.h)
};
int Plan(const PlanArgs& args);

}  // namespace meshsim::cli
