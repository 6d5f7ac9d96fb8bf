// meshsim plan --model M --cluster C --gpus N [--budget-gib G] [--top K] [--html FILE]
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <numeric>
#include <thread>

#include "sim/cli/commands.h"
#include "sim/cli/sweep_commands.h"
#include "sim/cli/sweep_report.h"
#include "sim/cli/terminal.h"
#include "sim/config/loader.h"
#include "sim/report/step_summary.h"
#include "sim/schedule/model_states.h"
#include "sim/sweep/outputs.h"
#include "sim/sweep/planner.h"
#include "sim/sweep/runner.h"
#include "sim/workload/transformer.h"

namespace meshsim::cli {
namespace {

constexpr int kBarWidth = 40;
constexpr const char* kCategoryLetters = "WGOAB";
// 256-colour foregrounds for weights, gradients, optimizer, activations, buffers.
constexpr const char* kCategoryColours[] = {"38;5;68", "38;5;208", "38;5;167", "38;5;73",
                                            "38;5;133"};

// One plan as the table shows it.
struct PlanRow {
  int tp = 0, pp = 0, dp = 0, ep = 1, zero = 0;
  std::string stage, data, tensor, embed;  // JAX-style: "ICIxDCN" sizes, the embed rule
  bool simulated = false;
  bool fits = false;
  double memory_gib = 0;     // simulated peak, or the lower bound where pruned
  double breakdown[5] = {};  // GiB by category
  std::optional<double> step_s, mfu, bubble;
};

PlanRow ShownRow(const ResultRow& r) {
  PlanRow p;
  p.tp = r.plan.tp;
  p.pp = r.plan.pp;
  p.dp = r.plan.dp;
  p.ep = r.plan.ep;
  p.zero = r.plan.zero;
  if (const JaxPlan& j = r.plan.jax; !j.Empty()) {
    auto size = [&j](const char* name) {
      const MeshAxisSpec& a = j.axes[j.AxisIndex(name)];
      return fmt::format("{}x{}", a.ici, a.dcn);
    };
    p.stage = size("stage");
    p.data = size("data");
    p.tensor = size("tensor");
    p.embed = j.Rule(LogicalDim::kEmbed).empty() ? "[]" : "data";
  }
  p.simulated = r.summary.has_value();
  p.fits = r.status == ConfigStatus::kOk;
  if (r.summary) {
    p.step_s = r.summary->step_time_s;
    p.mfu = r.summary->mfu;
    p.bubble = r.summary->bubble_fraction;
  }
  p.memory_gib = r.MemoryGibShown();
  const MemoryGib& m = r.MemoryBreakdownShown();
  const double parts[] = {m.weights, m.gradients, m.optimizer, m.activations, m.buffers};
  std::copy(std::begin(parts), std::end(parts), p.breakdown);
  return p;
}

// [WWWWGGOOOOAAA.....|.....] scaled so that `scale_gib` fills the bar.
std::string MemoryBar(const PlanRow& p, double budget_gib, double scale_gib, const Palette& pal) {
  std::string cells(kBarWidth, ' ');
  std::vector<int> category(kBarWidth, -1);
  double start = 0;
  for (int k = 0; k < 5; ++k) {
    const double end = start + p.breakdown[k];
    const int a = static_cast<int>(std::lround(start / scale_gib * kBarWidth));
    const int b = static_cast<int>(std::lround(end / scale_gib * kBarWidth));
    for (int i = std::max(a, 0); i < std::min(b, kBarWidth); ++i) category[i] = k;
    start = end;
  }
  const int budget_at =
      std::min(kBarWidth - 1, static_cast<int>(std::lround(budget_gib / scale_gib * kBarWidth)));
  const bool overflow = p.memory_gib > scale_gib * 1.0001;
  std::string out = "[";
  for (int i = 0; i < kBarWidth; ++i) {
    if (i == budget_at) {
      out += pal.on ? pal.Bold("\u2503") : "|";
      continue;
    }
    if (category[i] < 0) {
      out += pal.on ? pal.Dim("\u00b7") : ".";
    } else if (pal.on) {
      out += pal.Wrap("\u2588", kCategoryColours[category[i]]);
    } else {
      out += kCategoryLetters[category[i]];
    }
  }
  out += overflow ? (pal.on ? pal.Red("\u25b6") : ">") : "]";
  return out;
}

// "fits (12.3 GiB spare)" / "over by 45.6 GiB", padded to a fixed visible width.
std::string Verdict(const PlanRow& p, double budget, const Palette& pal) {
  const std::string word = p.fits ? "fits" : "over";
  const std::string rest =
      p.fits ? fmt::format(" ({:.1f} GiB spare)", budget - p.memory_gib)
             : fmt::format(" by {:.1f} GiB{}", p.memory_gib - budget, p.simulated ? "" : " ~");
  const int pad = std::max(0, 26 - static_cast<int>(word.size() + rest.size()));
  return (p.fits ? pal.Green(word) : pal.Red(word)) + rest + std::string(pad, ' ');
}

// The planner's base experiment: the model and cluster files, the planner's keys and the
// user's --set over them (which may not fix the axes the planner varies).
Result<Experiment> PlannerBase(const PlanArgs& args) {
  if (const Status s = CheckPlannerSets(args.sets, "meshsim run"); !s.ok()) return s.error();
  Result<ClusterSpec> cluster = LoadClusterFile(args.cluster);
  if (!cluster.ok()) return cluster.error();
  PlannerOptions po;
  po.gpus = args.gpus;
  po.budget_gib = args.budget_gib;
  po.headroom_gib = args.headroom_gib;
  po.global_batch = args.global_batch;
  po.jax = args.jax;
  Result<std::vector<KeyValue>> keys = PlannerKeys(cluster.value(), po);
  if (!keys.ok()) return keys.error();
  return ComposeExperiment("plan", args.model, args.cluster, keys.value(), "meshsim plan",
                           args.sets);
}

// The three header lines: the model and cluster, its model states, the fixed settings.
void PrintHeader(const Experiment& e, const PlanArgs& args, const Palette& pal, std::ostream& out) {
  const double budget = e.cluster.gpu.memory_gib;
  const double params = TotalParams(e.model);
  const ModelStateBytes states = ModelStates(params, 1, 0, e.training);
  out << pal.Bold(fmt::format(
             "meshsim plan: {} ({:.2f}B parameters) on {} x {} ({} node{} of {} "
             "GPU{}), budget {:.4g} GiB per GPU{}",
             e.model.name, params / 1e9, args.gpus, e.cluster.gpu.kind, e.cluster.nodes,
             e.cluster.nodes == 1 ? "" : "s", e.cluster.gpus_per_node,
             e.cluster.gpus_per_node == 1 ? "" : "s", budget,
             args.headroom_gib > 0 ? fmt::format(" ({:g} GiB kept free)", args.headroom_gib) : ""))
      << "\n";
  out << fmt::format(
      "model states: {:.0f} B/param x {:.2f}B params = {:.1f} GB ({:.1f} GiB) in all, "
      "before any split (weights {:.1f}, gradients {:.1f}, optimizer {:.1f} GiB)\n",
      states.Total() / params, params / 1e9, states.Total() / 1e9, states.Total() / kGiB,
      states.weights / kGiB, states.gradients / kGiB, states.optimizer / kGiB);
  const std::string space =
      args.jax
          ? fmt::format(
                "JAX-style mesh (stage, data, tensor) sizes ICI x DCN over {} chips, "
                "rules batch: data, heads/mlp/vocab/sequence: tensor, layers: "
                "stage, embed [] or data (FSDP)",
                args.gpus)
          : fmt::format("tp x pp x dp = {}, ZeRO 0-3{}", args.gpus,
                        e.model.IsMoe() ? fmt::format(", ep dividing tp x dp and the {} experts",
                                                      e.model.experts)
                                        : "");
  out << fmt::format(
      "plans: {}, global batch {} x {} tokens, micro-batch "
      "{}, 1F1B, selective recompute{}, {}, Adam\n\n",
      space, e.plan.global_batch, e.model.seq_len, e.plan.micro_batch,
      args.jax ? "" : " (+ sequence parallelism where tp > 1)", DtypeName(e.training.dtype));
}

// One scale for every bar: the largest need shown, but at most twice the budget so the
// budget line stays readable (larger needs overflow, >); when nothing shown fits, the
// largest need, so that the split and the distance to the budget line stay visible.
double BarScale(const std::vector<PlanRow>& rows, size_t shown, double budget, bool* any_fits) {
  double largest = budget;
  *any_fits = false;
  for (size_t i = 0; i < shown; ++i) {
    largest = std::max(largest, rows[i].memory_gib);
    *any_fits |= rows[i].fits;
  }
  return *any_fits ? std::clamp(largest * 1.02, 1.25 * budget, 2.0 * budget) : largest * 1.02;
}

// The plan's degrees as the table's first columns: tp, pp, dp, (ep,) zero.
std::string DegreeCells(const std::string& n, const std::string& tp, const std::string& pp,
                        const std::string& dp, const std::string& ep, const std::string& zero,
                        bool moe) {
  return fmt::format("{:>3} {:>3} {:>3} {:>4} ", n, tp, pp, dp) +
         (moe ? fmt::format("{:>3} ", ep) : "") + fmt::format("{:>4}  ", zero);
}

// The legend, the column heads and the first `shown` rows (with an ep column for a MoE
// model).
void PrintTable(const std::vector<PlanRow>& rows, size_t shown, double budget, bool moe,
                const Palette& pal, std::ostream& out) {
  bool any_fits = false;
  const double scale = BarScale(rows, shown, budget, &any_fits);
  out << "memory bars: " << (pal.on ? pal.Wrap("\u2588", kCategoryColours[0]) : "W") << " weights  "
      << (pal.on ? pal.Wrap("\u2588", kCategoryColours[1]) : "G") << " gradients  "
      << (pal.on ? pal.Wrap("\u2588", kCategoryColours[2]) : "O") << " optimizer  "
      << (pal.on ? pal.Wrap("\u2588", kCategoryColours[3]) : "A") << " activations  "
      << (pal.on ? pal.Wrap("\u2588", kCategoryColours[4]) : "B") << " buffers  "
      << (pal.on ? pal.Bold("\u2503") : "|") << " budget " << fmt::format("{:.4g}", budget)
      << " GiB; full bar = " << fmt::format("{:.0f}", scale) << " GiB"
      << (any_fits ? ", '>' = more" : "") << "\n\n";
  const bool jax = shown > 0 && !rows[0].stage.empty();
  out << (jax ? fmt::format("{:>3} {:>6} {:>6} {:>6} {:>5}  ", "#", "stage", "data", "tensor",
                            "embed")
              : DegreeCells("#", "tp", "pp", "dp", "ep", "zero", moe))
      << fmt::format("{:<{}}  {:>9}  {:<26} {:>8} {:>6} {:>6}\n", "memory per GPU", kBarWidth + 2,
                     "GiB", "", "step s", "MFU", "bubble");
  for (size_t i = 0; i < shown; ++i) {
    const PlanRow& p = rows[i];
    out << (jax ? fmt::format("{:>3} {:>6} {:>6} {:>6} {:>5}  ", i + 1, p.stage, p.data, p.tensor,
                              p.embed)
                : DegreeCells(std::to_string(i + 1), std::to_string(p.tp), std::to_string(p.pp),
                              std::to_string(p.dp), std::to_string(p.ep), std::to_string(p.zero),
                              moe))
        << MemoryBar(p, budget, scale, pal) << fmt::format("  {:>9.1f}  ", p.memory_gib)
        << Verdict(p, budget, pal)
        << fmt::format(" {:>8} {:>6} {:>6}\n", p.step_s ? fmt::format("{:.3f}", *p.step_s) : "-",
                       p.mfu ? fmt::format("{:.1f}%", 100 * *p.mfu) : "-",
                       p.bubble ? fmt::format("{:.1f}%", 100 * *p.bubble) : "-");
  }
}

// The counts, and when nothing fits by how much the smallest plan is over.
void PrintFooter(const std::vector<PlanRow>& rows, size_t shown, long fitting, double budget,
                 const PlannerResult& result, const Palette& pal, std::ostream& out) {
  out << "\n";
  if (shown < rows.size()) {
    out << fmt::format("showing {} of {} plans (--top 0 shows all). ", shown, rows.size());
  }
  out << fmt::format("{} of {} plans fit in {:.4g} GiB.", fitting, rows.size(), budget);
  if (result.invalid > 0) {
    out << fmt::format(" {} splits are invalid and not listed (e.g. {}).", result.invalid,
                       result.invalid_example);
  }
  out << "\nMemory: simulated peak of the worst GPU; '~' marks plans pruned by the memory model "
         "(a lower bound, not simulated).\n";
  if (fitting > 0) return;
  const PlanRow& best = rows.front();
  out << pal.Red(fmt::format(
             "No plan fits: the smallest need is {:.1f} GiB per GPU (tp {} pp {} dp {}{} "
             "ZeRO-{}) = {:.1f} GB, over the {:.4g} GiB budget by {:.1f} GiB ({:.1f}x).",
             best.memory_gib, best.tp, best.pp, best.dp,
             best.ep > 1 ? fmt::format(" ep {}", best.ep) : "", best.zero,
             best.memory_gib * kGiB / 1e9, budget, best.memory_gib - budget,
             best.memory_gib / budget))
      << "\n";
}

// --csv and --html.
Status WritePlannerFiles(const PlanArgs& args, const Experiment& e, const PlannerResult& result,
                         long fitting, std::ostream& out) {
  if (!args.csv.empty()) {
    std::vector<size_t> all(result.table.rows.size());
    std::iota(all.begin(), all.end(), 0);
    if (Status s = WriteResultsCsv(args.csv, result.table, all); !s.ok()) return s;
  }
  if (args.html.empty()) return Ok{};
  const ModelStateBytes states = ModelStates(TotalParams(e.model), 1, 0, e.training);
  const std::string title =
      fmt::format("{} on {} x {}", e.model.name, args.gpus, e.cluster.gpu.kind);
  const std::string subtitle = fmt::format(
      "{} plans, {} fit in {:.4g} GiB per GPU · global batch {} · model states {:.1f} GB in all",
      result.ranked.size(), fitting, e.cluster.gpu.memory_gib, e.plan.global_batch,
      states.Total() / 1e9);
  if (Status s = WriteExplorer(result.table, args.html, title, subtitle); !s.ok()) return s;
  out << "wrote " << args.html << "\n";
  return Ok{};
}

}  // namespace

int Plan(const PlanArgs& args) {
  RetainFreedMemory();
  Result<Experiment> base = PlannerBase(args);
  if (!base.ok()) return ReportError(base.error());
  const PlannerSpace space = MakePlannerSpace(base.value(), args.gpus);
  const Experiment& e = space.spec.groups.front().experiment;
  const double budget = e.cluster.gpu.memory_gib;
  const int threads = args.threads > 0
                          ? args.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  ProgressBar bar(!args.quiet && IsTerminal(stderr));
  const PlannerResult result = RunPlanner(space, threads, [&bar](int64_t done, int64_t total) {
    bar.Update(done, total, done, "plans evaluated", done == total);
  });
  bar.Finish();
  std::vector<PlanRow> rows;
  for (size_t r : result.ranked) rows.push_back(ShownRow(result.table.rows[r]));
  Palette pal;
  pal.on = IsTerminal(stdout);
  PrintHeader(e, args, pal, std::cout);
  if (rows.empty()) {
    std::cout << "No valid split of " << args.gpus << " GPUs for this model";
    if (!result.invalid_example.empty()) std::cout << " (" << result.invalid_example << ")";
    std::cout << ".\n";
    return kDoesNotFit;
  }
  const size_t shown = args.top > 0 ? std::min<size_t>(rows.size(), args.top) : rows.size();
  PrintTable(rows, shown, budget, e.model.IsMoe(), pal, std::cout);
  const long fitting =
      std::count_if(rows.begin(), rows.end(), [](const PlanRow& p) { return p.fits; });
  PrintFooter(rows, shown, fitting, budget, result, pal, std::cout);
  if (Status s = WritePlannerFiles(args, e, result, fitting, std::cout); !s.ok()) {
    return ReportError(s.error());
  }
  return fitting > 0 ? kOk : kDoesNotFit;
}

}  // namespace meshsim::cli
