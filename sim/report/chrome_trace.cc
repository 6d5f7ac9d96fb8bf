#include "sim/report/chrome_trace.h"

#include <fmt/format.h>

#include <iterator>
#include <string>

#include "sim/core/atomic_file.h"
#include "sim/report/gzip_stream.h"
#include "sim/report/summary.h"

namespace meshsim {
namespace {

// Escapes a string for a JSON string literal (names here are ASCII; quote and backslash
// are the only specials that can occur).
std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out;
}

class TraceWriter {
 public:
  explicit TraceWriter(std::ostream& out) : out_(out) {}
  ~TraceWriter() { Flush(); }

  template <typename... Args>
  void Event(fmt::format_string<Args...> f, Args&&... args) {
    buf_.append(first_ ? std::string_view("\n") : std::string_view(",\n"));
    first_ = false;
    fmt::format_to(std::back_inserter(buf_), f, std::forward<Args>(args)...);
    if (buf_.size() > (1 << 20)) Flush();
  }
  void Raw(std::string_view s) { buf_.append(s); }
  void Flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

 private:
  std::ostream& out_;
  fmt::memory_buffer buf_;
  bool first_ = true;
};

double Us(SimTime t) { return t.microseconds(); }

// The kernels of a compute op as trace args (a leading comma; empty without shapes):
// "gemms": "m x n x k[ x batch]; ..." and "attention": "batch_heads x seq_q x seq_kv x
// head_dim[ causal][ bwd]; ...". The shapes to measure for a GEMM table (README "Kernel
// model").
std::string KernelArgs(const Program& p, const Op& op) {
  const KernelShapes* shapes = p.ShapesOf(p.WorkOf(op));
  if (!shapes || shapes->Empty()) return {};
  std::string out;
  if (!shapes->gemms.empty()) {
    out += R"(,"gemms":")";
    for (size_t i = 0; i < shapes->gemms.size(); ++i) {
      const GemmShape& g = shapes->gemms[i];
      fmt::format_to(std::back_inserter(out), "{}{:.6g}x{:.6g}x{:.6g}", i ? "; " : "", g.m, g.n,
                     g.k);
      if (g.launches_per_batch) {
        fmt::format_to(std::back_inserter(out), " ({:.6g} launches)", g.batch);
      } else if (g.batch != 1) {
        fmt::format_to(std::back_inserter(out), "x{:.6g}", g.batch);
      }
    }
    out += '"';
  }
  if (!shapes->attention.empty()) {
    out += R"(,"attention":")";
    for (size_t i = 0; i < shapes->attention.size(); ++i) {
      const AttentionShape& a = shapes->attention[i];
      fmt::format_to(std::back_inserter(out), "{}{:.6g}x{:.6g}x{:.6g}x{:.6g}{}{}", i ? "; " : "",
                     a.batch_heads, a.seq_q, a.seq_kv, a.head_dim, a.causal ? " causal" : "",
                     a.backward ? " bwd" : "");
    }
    out += '"';
  }
  return out;
}

// An op of the rank's host thread (Stream::kHost): launches, or a wait for the GPU.
void WriteHostOp(const Simulation& sim, int rank, OpId id, TraceWriter& w) {
  const Program& p = sim.program;
  const Op& op = p.op(id);
  const double ts = Us(sim.replay.start[id]);
  const int32_t units = HostExpertUnits(p.WorkOf(op));
  if (units > 0) {  // GroupedLinear's per-expert host work (HostThread::Issue)
    w.Event(
        R"J({{"ph":"X","pid":{},"tid":{},"ts":{:.6f},"dur":{:.6f},"name":"{}","cat":"host","args":{{"layer":{},"micro_batch":{},"launches":{},"expert_units":{}}}}})J",
        rank, static_cast<int>(Stream::kHost), ts, Us(sim.replay.end[id]) - ts, TagName(op.tag),
        op.layer, op.micro_batch, p.WorkOf(op).kernels, units);
    return;
  }
  w.Event(
      R"J({{"ph":"X","pid":{},"tid":{},"ts":{:.6f},"dur":{:.6f},"name":"{}","cat":"host","args":{{"layer":{},"micro_batch":{},"launches":{}}}}})J",
      rank, static_cast<int>(Stream::kHost), ts, Us(sim.replay.end[id]) - ts, TagName(op.tag),
      op.layer, op.micro_batch, p.WorkOf(op).kernels);
}

void WriteRank(const Simulation& sim, int rank, TraceWriter& w) {
  const Program& p = sim.program;
  const Coords& c = sim.mesh.CoordsOf(rank);
  const int node = rank / sim.experiment.cluster.gpus_per_node;
  w.Event(
      R"J({{"ph":"M","pid":{},"name":"process_name","args":{{"name":"GPU {} (node {}, tp {} pp {} dp {} cp {})"}}}})J",
      rank, rank, node, c.tp, c.pp, c.dp, c.cp);
  w.Event(R"J({{"ph":"M","pid":{},"name":"process_sort_index","args":{{"sort_index":{}}}}})J", rank,
          rank);
  for (int s = 0; s < kStreamCount; ++s) {
    const auto& queue = p.StreamOps(rank, static_cast<Stream>(s));
    bool any = false;
    for (OpId id : queue) any = any || p.op(id).kind != OpKind::kMemory;
    if (!any) continue;
    w.Event(R"J({{"ph":"M","pid":{},"tid":{},"name":"thread_name","args":{{"name":"{}"}}}})J", rank,
            s, StreamName(static_cast<Stream>(s)));
    for (OpId id : queue) {
      const Op& op = p.op(id);
      if (op.kind == OpKind::kMemory) continue;
      if (op.stream == Stream::kHost) {
        WriteHostOp(sim, rank, id, w);
        continue;
      }
      const double ts = Us(sim.replay.start[id]);
      const double dur = Us(sim.replay.end[id]) - ts;
      const SimTime slowed = sim.replay.Interference(p, id);
      if (op.kind == OpKind::kCompute && slowed > SimTime::Zero()) {
        // Slowed by communication running beside it: the extra time and the factor.
        const double extra = slowed.microseconds();
        w.Event(
            R"J({{"ph":"X","pid":{},"tid":{},"ts":{:.6f},"dur":{:.6f},"name":"{}","cat":"compute","args":{{"layer":{},"micro_batch":{},"flops":{:.6g},"bytes":{:.6g}{},"comm_interference_us":{:.6f},"slowdown":{:.6f}}}}})J",
            rank, s, ts, dur, TagName(op.tag), op.layer, op.micro_batch, p.WorkOf(op).flops,
            p.WorkOf(op).bytes, KernelArgs(p, op), extra, dur / (dur - extra));
      } else if (op.kind == OpKind::kCompute) {
        w.Event(
            R"J({{"ph":"X","pid":{},"tid":{},"ts":{:.6f},"dur":{:.6f},"name":"{}","cat":"compute","args":{{"layer":{},"micro_batch":{},"flops":{:.6g},"bytes":{:.6g}{}}}}})J",
            rank, s, ts, dur, TagName(op.tag), op.layer, op.micro_batch, p.WorkOf(op).flops,
            p.WorkOf(op).bytes, KernelArgs(p, op));
      } else {
        const Comm& comm = p.comms()[op.comm];
        const auto& group = p.groups()[comm.group];
        w.Event(
            R"J({{"ph":"X","pid":{},"tid":{},"ts":{:.6f},"dur":{:.6f},"name":"{} {}","cat":"comm","args":{{"layer":{},"micro_batch":{},"bytes":{:.6g},"group_size":{},"peer_first":{}}}}})J",
            rank, s, ts, dur, TagName(op.tag), CommOpName(comm.op), op.layer, op.micro_batch,
            comm.bytes, group.size(), group.front());
      }
    }
  }
  for (const MemoryPoint& m : sim.replay.memory[rank].curve) {
    w.Event(
        R"J({{"ph":"C","pid":{},"ts":{:.6f},"name":"memory","args":{{"allocated_gib":{:.6f}}}}})J",
        rank, Us(m.time), m.bytes / kGiB);
  }
}

}  // namespace

std::vector<int> DefaultTraceRanks(const Mesh& mesh) {
  std::vector<int> ranks;
  if (mesh.Size() <= kTraceAllRanksUpTo) {
    for (int r = 0; r < mesh.Size(); ++r) ranks.push_back(r);
    return ranks;
  }
  for (int s = 0; s < mesh.Degree(Axis::kPp); ++s) {
    ranks.push_back(mesh.RankOf(0, 0, 0, s));
  }
  return ranks;
}

std::vector<int> DefaultTraceRanks(const Simulation& sim) { return DefaultTraceRanks(sim.mesh); }

void WriteChromeTrace(const Simulation& sim, const std::vector<int>& ranks, std::ostream& out) {
  TraceWriter w(out);
  w.Raw(fmt::format(
      R"J({{"displayTimeUnit":"ms","otherData":{{"experiment":"{}","step_time_s":{:.9f}}},"traceEvents":[)J",
      Escape(sim.experiment.name), sim.replay.step_time.seconds()));
  for (int r : ranks) WriteRank(sim, r, w);
  // NIC throughput counters, in a process of their own.
  if (!sim.replay.nic_samples.empty()) {
    const int pid = sim.mesh.Size();
    w.Event(
        R"J({{"ph":"M","pid":{},"name":"process_name","args":{{"name":"network: NIC throughput (GB/s out)"}}}})J",
        pid);
    for (const auto& s : sim.replay.nic_samples) {
      w.Event(R"J({{"ph":"C","pid":{},"ts":{:.6f},"name":"{}","args":{{"gbps":{:.3f}}}}})J", pid,
              Us(s.t), Escape(s.nic), s.bytes_per_s / 1e9);
    }
  }
  w.Raw("\n]}\n");
}

Status WriteChromeTraceFile(const Simulation& sim, const std::vector<int>& ranks,
                            const std::string& path) {
  const bool gzip = path.ends_with(".gz");
  return WriteFileAtomically(path, [&](std::ostream& out) {
    if (!gzip) {
      WriteChromeTrace(sim, ranks, out);
      return true;
    }
    GzipOstream compressed(out);
    WriteChromeTrace(sim, ranks, compressed);
    return compressed.Finish();
  });
}

}  // namespace meshsim
