#include "sim/report/explain.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

#include "sim/plan/sharding.h"

namespace meshsim {
namespace {

Axis AxisOf(Stream s) {
  switch (s) {
    case Stream::kTp:
    case Stream::kTpBack:
      return Axis::kTp;
    case Stream::kCp:
      return Axis::kCp;
    case Stream::kEp:
      return Axis::kEp;
    case Stream::kDp:
    case Stream::kDpGather:
      return Axis::kDp;
    default:
      return Axis::kPp;
  }
}

const char* AxisText(Axis a) {
  static const char* names[kAxisCount] = {"tp", "cp", "ep", "dp", "pp"};
  return names[static_cast<int>(a)];
}

std::string Dims(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string Join(const std::vector<std::string>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s + ")";
}

std::string PlanLine(const PlanSpec& p) {
  std::ostringstream o;
  o << "plan: tp " << p.tp << " x pp " << p.pp << " x dp " << p.dp << " x cp " << p.cp << " = "
    << p.Ranks() << " GPUs, ep " << p.ep << ", zero " << p.zero
    << (p.sequence_parallel ? ", sequence parallel" : "") << ", " << p.MicroBatches()
    << " micro-batches of " << p.micro_batch << "\n";
  return o.str();
}

std::string MeshLines(const JaxPlan& jax) {
  std::string s = "mesh (JAX-style, outermost first):";
  for (const MeshAxisSpec& a : jax.axes) {
    s += " " + a.name + " " + std::to_string(a.Size()) + " (ici " + std::to_string(a.ici) +
         ", dcn " + std::to_string(a.dcn) + ")";
  }
  s += "\ngroups:";
  const std::vector<std::string> names = AxisNames(jax);
  for (int a = 0; a < kAxisCount; ++a) {
    if (!names[a].empty())
      s += std::string(" ") + AxisText(static_cast<Axis>(a)) + " = " + names[a];
  }
  return s + "\n";
}

std::string ShapeLines(const Experiment& e) {
  std::string s = "per-device shapes (global -> one GPU; activations of one micro-batch):\n";
  for (const DeviceShape& d : PerDeviceShapes(e.model, e.plan)) {
    char line[256];
    std::snprintf(line, sizeof line, "  %-22s %-32s %-28s -> %s\n", d.array.c_str(),
                  Join(d.dims).c_str(), Dims(d.global).c_str(), Dims(d.local).c_str());
    s += line;
  }
  return s;
}

std::string CollectiveLine(const PlanSpec& p, const ExplainedCollective& c) {
  char line[256];
  std::snprintf(line, sizeof line, "    %-15s %-22s %-12s ranks %-5d bytes %-14.0f x %d\n",
                std::string(CommOpName(c.op)).c_str(), GroupLabel(p, c.stream).c_str(),
                std::string(StreamName(c.stream)).c_str(), c.group_size, c.bytes, c.count);
  return line;
}

// The collectives of one rank, layers with the same set merged into ranges.
std::string RankLines(const PlanSpec& p, const std::vector<ExplainedCollective>& all) {
  std::map<int, std::vector<ExplainedCollective>> by_layer;
  for (ExplainedCollective c : all) {
    const int layer = c.layer;
    c.layer = 0;  // compare layers by their collectives only
    by_layer[layer].push_back(c);
  }
  std::string s;
  for (auto it = by_layer.begin(); it != by_layer.end();) {
    auto end = std::next(it);
    while (end != by_layer.end() && end->first == std::prev(end)->first + 1 &&
           end->second == it->second && it->first >= 0) {
      ++end;
    }
    const int first = it->first, last = std::prev(end)->first;
    s += first < 0 ? "  not tied to a layer:\n"
         : first == last
             ? "  layer " + std::to_string(first) + ":\n"
             : "  layers " + std::to_string(first) + "-" + std::to_string(last) + " (each):\n";
    for (const ExplainedCollective& c : it->second) s += CollectiveLine(p, c);
    it = end;
  }
  return s;
}

}  // namespace

std::vector<ExplainedCollective> CollectivesOf(const Program& program, int rank) {
  std::map<std::tuple<int, Stream, CommOp, int, double>, int> counts;
  for (const Op& op : program.ops()) {
    if (op.kind != OpKind::kComm || op.rank != rank) continue;
    const Comm& c = program.comms()[op.comm];
    const int size = static_cast<int>(program.groups()[c.group].size());
    ++counts[{op.layer, op.stream, c.op, size, c.bytes}];
  }
  std::vector<ExplainedCollective> out;
  for (const auto& [k, n] : counts) {
    const auto& [layer, stream, op, size, bytes] = k;
    out.push_back({layer, stream, op, size, bytes, n});
  }
  return out;
}

std::string GroupLabel(const PlanSpec& plan, Stream stream) {
  const Axis a = AxisOf(stream);
  std::string s = AxisText(a);
  if (a == Axis::kDp && plan.cp > 1) s = "dp x cp";
  if (plan.jax.Empty()) return s;
  const std::vector<std::string> names = AxisNames(plan.jax);
  std::string mesh = names[static_cast<int>(a)];
  if (a == Axis::kDp && plan.cp > 1) mesh += "," + names[static_cast<int>(Axis::kCp)];
  return s + " [" + mesh + "]";
}

std::string ExplainText(const Experiment& e, const Mesh& mesh, const Program& program) {
  std::string s = "experiment: " + e.name + "\n" + PlanLine(e.plan);
  if (!e.plan.jax.Empty()) s += MeshLines(e.plan.jax);
  s += ShapeLines(e);
  s += "collectives per step of rank 0's pipeline (bytes as nccl-tests count them):\n";
  const std::vector<int> pipeline = mesh.Pipeline(0);
  for (size_t stage = 0; stage < pipeline.size(); ++stage) {
    s += "stage " + std::to_string(stage) + " (rank " + std::to_string(pipeline[stage]) + "):\n";
    s += RankLines(e.plan, CollectivesOf(program, pipeline[stage]));
  }
  return s;
}

}  // namespace meshsim
