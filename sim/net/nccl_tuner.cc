#include "sim/net/nccl_tuner.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "sim/hw/nics.h"

namespace meshsim {

GroupShape GroupShapeOf(int gpus_per_node, std::span<const int> gpus) {
  GroupShape s;
  s.ranks = static_cast<int>(gpus.size());
  const int per = gpus_per_node;
  if (gpus.size() <= 16) {
    std::array<int, 16> node, count;
    for (int g : gpus) {
      int j = 0;
      while (j < s.nodes && node[j] != g / per) ++j;
      if (j == s.nodes) {
        node[s.nodes] = g / per;
        count[s.nodes++] = 0;
      }
      s.per_node = std::max(s.per_node, ++count[j]);
    }
    return s;
  }
  std::vector<int> nodes(gpus.size());
  for (size_t i = 0; i < gpus.size(); ++i) nodes[i] = gpus[i] / per;
  std::sort(nodes.begin(), nodes.end());
  for (size_t i = 0; i < nodes.size();) {
    size_t j = i;
    while (j < nodes.size() && nodes[j] == nodes[i]) ++j;
    ++s.nodes;
    s.per_node = std::max(s.per_node, static_cast<int>(j - i));
    i = j;
  }
  return s;
}

namespace {

// NCCL's indices: algorithms tree 0, ring 1; protocols LL 0, LL128 1, Simple 2.
constexpr int kTreeIdx = 0, kRingIdx = 1;
constexpr int kLL = 0, kLL128 = 1, kSimple = 2;

// NCCL src/graph/tuning.cc, ncclTunerConstantsDefaults (microseconds, GB/s).
constexpr double kBaseLatencyUs[2][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}};
constexpr double kNvlinkHopUs[2][3] = {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}};
constexpr double kNetHopUs[2][3] = {{5.0, 8.5, 14.0}, {2.7, 4.0, 14.0}};
// llMaxBws[row][nodes index]: one node uses the GPU generation's row; several use row 0
// (Intel host) or 1 (AMD host).
constexpr double kLlMaxBw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
constexpr double kPerChRingLL128Bw[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
constexpr double kPerChTreeLL128Bw[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
constexpr double kPerChTreeBw[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
// treeCorrectionFactor[protocol][log2(bytes / 64)], 64 B to 512 MiB (trees use the first
// 23 entries, NVLSTree on Blackwell with an x86 host all 24).
constexpr double kTreeCorrection[3][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};
// NVLink SHARP. tuning.cc: nvlsEfficiency (by generation), perChMaxNVLSTreeBws, the
// NVLS / NVLSTree Simple latencies (NVLink 25 us; network 20.9 us for NVLSTree);
// device.h: NCCL_MAX_NVLS_ARITY; transport/nvls.cc: NVLS_NCHANNELS_SM90 / SM100_NVL /
// SM100; graph/search.cc: the speeds (GB/s per channel) the topology search tries, one
// node (intra) and several (inter), Hopper (sm90) and Blackwell (sm100).
constexpr double kNvlsEfficiency[4] = {0, 0, 0.85, 0.74};
// graph/topo.h: the NVLink rate NCCL's search counts per link (SM70/SM80 20, SM90 20.6,
// SM100 40.1 GB/s) over the link's signalling rate (25 GB/s to Hopper, 50 Blackwell).
constexpr double kNcclNvlinkRate[4] = {20.0 / 25, 20.0 / 25, 20.6 / 25, 40.1 / 50};
constexpr double kPerChNvlsTreeBw[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}};
constexpr double kNvlsHopUs = 25.0, kNvlsTreeNetHopUs = 20.9;
constexpr int kNvlsMaxArity = 32;
constexpr int kNvlsChannelsHopper = 16, kNvlsChannelsBlackwellNode = 24,
              kNvlsChannelsBlackwellNet = 32;
// enqueue.cc, calcCollChunking (NVLSTree): nvlsChunkSize 128 KiB, at most 64 KiB from 4
// nodes (nvlsTreeMaxChunkSize), halved for small sizes.
constexpr double kNvlsChunk = 128 * 1024;
// graph/search.cc, speedArrayInter: the inter-node speeds before Hopper (sm90 / sm100 below).
constexpr double kSpeedInter[] = {48, 30, 28, 24, 20, 18,  15,  12,   10,  9,
                                  7,  6,  5,  4,  3,  2.4, 1.2, 0.24, 0.12};
constexpr double kSm90SpeedIntra[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
constexpr double kSm90SpeedInter[] = {48, 45, 42, 40, 30,  24,  22,   20,  17.5,
                                      15, 12, 6,  3,  2.4, 1.2, 0.24, 0.12};
constexpr double kSm100SpeedIntra[] = {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
constexpr double kSm100SpeedInter[] = {96, 86,   80, 48, 45.1, 42, 40,  30,  24,   22,
                                       20, 17.5, 15, 12, 6,    3,  2.4, 1.2, 0.24, 0.12};
// src/include/device.h: threads per channel (NCCL_{LL,LL128,SIMPLE}_MAX_NTHREADS) and
// bytes per thread before a channel is worth adding (NCCL_*_THREAD_THRESHOLD).
constexpr int kMaxThreads[3] = {512, 640, 512};
constexpr int kThreadThreshold[3] = {8, 8, 64};
// Channels of a communicator: observed in NCCL init logs on p5.48xlarge, 8 x H100 ("24
// coll channels" on one node; 16 on two nodes: aws-samples/aws-do-eks,
// Container-Root/eks/deployment/nccl-test/README.md @ 701c554): twice the channels
// of NCCL's topology search (12 of 30 GB/s on 370 GB/s of NVLink; one per NIC).
constexpr int kChannelsOneNode = 24;
constexpr int kChannelsPerRail = 2;
constexpr int kMaxChannels = 64;  // device.h, MAXCHANNELS
// graph/search.cc, ncclTopoCompute: a search keeps lowering its speed while the next step
// is more than 0.49 of the best speed found, and finds at most MAXCHANNELS / 2 channels.
constexpr double kSearchSpeedRatio = 0.49;
constexpr int kSearchMaxChannels = kMaxChannels / 2;

int Log2Floor(uint64_t v) {
  int r = -1;
  while (v > 0) {
    v >>= 1;
    ++r;
  }
  return r;
}

int ProtocolIndex(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::kLL:
      return kLL;
    case NcclProtocol::kLL128:
      return kLL128;
    default:
      return kSimple;
  }
}

NcclProtocol ProtocolOf(int p) {
  return p == kLL ? NcclProtocol::kLL : p == kLL128 ? NcclProtocol::kLL128 : NcclProtocol::kSimple;
}

int GenerationOf(std::string_view kind) {
  auto has = [kind](std::string_view s) { return kind.find(s) != std::string_view::npos; };
  if (has("V100")) return 0;
  if (has("H100") || has("H200") || has("H800") || has("H20") || has("GH200")) return 2;
  if (has("B100") || has("B200") || has("B300")) return 3;
  return 1;
}

// gpu.architecture where it names an NVIDIA generation, else gpu.kind's.
int GenerationOf(const GpuSpec& gpu) {
  switch (gpu.architecture) {
    case GpuArch::kAmpere:
      return 1;
    case GpuArch::kHopper:
      return 2;
    case GpuArch::kBlackwell:
      return 3;
    default:
      return GenerationOf(gpu.kind);
  }
}

// NCCL_NVLS_ENABLE's default: on where the GPU is Hopper or newer and an NVSwitch joins
// the node (NCCL finds no NVLS graph otherwise).
bool NvlsOn(const ClusterSpec& c, int generation) {
  if (c.intra_node.nvls != NvlsMode::kAuto) return c.intra_node.nvls == NvlsMode::kOn;
  const GpuArch a = c.gpu.architecture;
  const bool nvidia = a == GpuArch::kUnspecified || a == GpuArch::kAmpere ||
                      a == GpuArch::kHopper || a == GpuArch::kBlackwell;
  return nvidia && generation >= 2 && c.intra_node.kind == IntraNodeKind::kNvswitch;
}

// The topology search's speed for `bw` GB/s: the largest step <= bw (the slowest if none).
double SpeedStep(std::span<const double> steps, double bw) {
  for (double s : steps) {
    if (s <= bw) return s;
  }
  return steps.back();
}

// The inter-node speed steps of NCCL's topology search for a GPU generation.
std::span<const double> InterSpeeds(int generation) {
  if (generation >= 3) return kSm100SpeedInter;
  if (generation == 2) return kSm90SpeedInter;
  return kSpeedInter;
}

int Steps(CommOp op, int n) { return op == CommOp::kAllReduce ? 2 * (n - 1) : n - 1; }
int NodesIndex(int nodes) { return nodes <= 2 ? nodes - 1 : 2; }

}  // namespace

NcclTuner::NcclTuner(const ClusterSpec& c, int channels)
    : generation_(GenerationOf(c.gpu)),
      amd_host_(generation_ == 1),
      x86_host_(!c.gpu.kind.starts_with("GH") && !c.gpu.kind.starts_with("GB")),
      nvls_(NvlsOn(c, generation_)),
      nvlink_(c.intra_node.gbps_per_gpu * c.efficiency.network),
      nvlink_search_(c.intra_node.gbps_per_gpu * kNcclNvlinkRate[generation_]),
      nic_(c.inter_node.gbps_per_nic * c.NicEfficiency()),
      nic_search_(c.inter_node.gbps_per_nic),
      nics_(std::max(1, c.inter_node.nics_per_node)),
      gpus_per_node_(std::max(1, c.gpus_per_node)),
      nvswitch_(c.intra_node.kind == IntraNodeKind::kNvswitch),
      channels_(channels) {}

double NcclTuner::WireFactor(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::kLL:
      return 2.0;
    case NcclProtocol::kLL128:
      return 128.0 / 120.0;
    default:
      return 1.0;
  }
}

int NcclTuner::MaxChannels(const GroupShape& g) const {
  if (channels_ > 0) return channels_;
  if (g.nodes <= 1) return kChannelsOneNode;
  return std::min(kMaxChannels, kChannelsPerRail * SearchChannels(g));
}

// NCCL's ring search across nodes (graph/search.cc, ncclTopoCompute): from the largest
// speed step <= one NIC, each step tries one channel per NIC of the group's ranks on a
// node, as many as the GPU's NVLink (as NCCL counts it) carries at that speed; the most
// channels x speed wins (a tie keeps the faster), and the search stops once it reaches
// the NVLink bandwidth or the next step is <= 0.49 of the best speed.
int NcclTuner::GroupNics(const GroupShape& g) const {
  InterNodeSpec in;
  in.nics_per_node = nics_;
  return NicsOfRanks(in, std::max(1, g.per_node), gpus_per_node_);
}

int NcclTuner::SearchChannels(const GroupShape& g) const {
  const int per_nic = GroupNics(g);
  if (g.per_node <= 1 || !nvswitch_) return per_nic;
  const std::span<const double> speeds = InterSpeeds(generation_);
  size_t i = 0;
  while (i + 1 < speeds.size() && speeds[i] > nic_search_) ++i;
  int best = 0;
  double best_speed = 0;
  for (; i < speeds.size(); ++i) {
    const int fit = static_cast<int>(nvlink_search_ / speeds[i] + 1e-9);
    const int n = std::min({kSearchMaxChannels, per_nic, fit});
    if (n * speeds[i] > best * best_speed) {
      best = n;
      best_speed = speeds[i];
    }
    if (best * best_speed >= nvlink_search_) break;
    if (i + 1 < speeds.size() && best > 0 && speeds[i + 1] / best_speed <= kSearchSpeedRatio) break;
  }
  return std::max(1, best);
}

double NcclTuner::RingBusBw(const GroupShape& g) const {
  double bw = std::numeric_limits<double>::infinity();
  if (g.per_node > 1) bw = nvlink_;
  if (g.nodes > 1) bw = std::min(bw, GroupNics(g) * nic_);
  return bw;
}

double NcclTuner::TreeBusBw(const GroupShape& g) const {
  // On two nodes NCCL's search raises a tree's intra-node bandwidth above the network's.
  if (g.nodes <= 2 && g.per_node > 1) return nvlink_;
  return RingBusBw(g);
}

double NcclTuner::BusBw(CommOp op, const GroupShape& g, int a, int p, int channels) const {
  const int ni = NodesIndex(g.nodes);
  const int row = g.nodes == 1 ? generation_ : (amd_host_ ? 1 : 0);
  const double ll_max = kLlMaxBw[row][ni];
  if (a == kRingIdx) {
    const double bw = RingBusBw(g);
    if (p == kLL) return std::min(ll_max, 0.5 * bw);
    if (p == kLL128) return std::min(0.92 * bw, channels * kPerChRingLL128Bw[generation_][ni]);
    return bw;
  }
  assert(op == CommOp::kAllReduce);
  (void)op;
  double bw = std::min(0.92 * TreeBusBw(g), channels * kPerChTreeBw[generation_][ni]);
  if (p == kLL) bw = std::min(bw / 3.8, ll_max);
  if (p == kLL128) {
    bw = std::min(bw * (g.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                  channels * kPerChTreeLL128Bw[generation_][ni]);
  }
  return bw;
}

double NcclTuner::CapBusBw(const GroupShape& g, int a, int p, int channels) const {
  const int ni = NodesIndex(g.nodes);
  const int row = g.nodes == 1 ? generation_ : (amd_host_ ? 1 : 0);
  double cap = std::numeric_limits<double>::infinity();
  if (p == kLL) cap = kLlMaxBw[row][ni];
  if (a == kRingIdx && p == kLL128) cap = channels * kPerChRingLL128Bw[generation_][ni];
  if (a == kTreeIdx) {
    cap = std::min(cap, channels * kPerChTreeBw[generation_][ni]);
    if (p == kLL128) cap = std::min(cap, channels * kPerChTreeLL128Bw[generation_][ni]);
  }
  return cap;
}

double NcclTuner::Latency(CommOp op, const GroupShape& g, int a, int p) const {
  const double intra = kNvlinkHopUs[a][p];
  // One rank per node: NCCL charges the network hops at the tree's latency.
  const double inter = g.per_node == 1 ? kNetHopUs[kTreeIdx][p] : kNetHopUs[a][p];
  if (a == kTreeIdx) return 2 * ((g.per_node - 1) * intra + Log2Floor(g.nodes) * inter);
  const int steps = Steps(op, g.ranks);
  const int inter_steps = g.nodes == 1 ? 0 : Steps(op, g.nodes);
  double hop = intra;
  if (g.nodes > 1) hop = std::max(hop, (amd_host_ ? 2.0 : 1.0) * (p == kSimple ? 3 : 1));
  return (steps - inter_steps) * hop + inter_steps * inter;
}

bool NcclTuner::NvlsFits(CommOp op, const GroupShape& g) const {
  if (!nvls_ || generation_ < 2 || g.per_node < 2 || NvlsHeads(g) < 2) return false;
  if (op == CommOp::kAllReduce) return true;
  return (op == CommOp::kAllGather || op == CommOp::kReduceScatter) && g.nodes == 1 &&
         g.per_node <= kNvlsMaxArity;
}

int NcclTuner::NvlsHeads(const GroupShape& g) const {
  const int heads = std::min(g.per_node, kNvlsMaxArity);
  return g.nodes > 1 ? std::min(heads, nics_) : heads;
}

double NcclTuner::NvlsBusBw(CommOp op, const GroupShape& g) const {
  const bool tree = g.nodes > 1;
  const int h = NvlsHeads(g);
  const std::span<const double> intra =
      generation_ >= 3 ? std::span<const double>(kSm100SpeedIntra) : kSm90SpeedIntra;
  const std::span<const double> inter =
      generation_ >= 3 ? std::span<const double>(kSm100SpeedInter) : kSm90SpeedInter;
  // A head moves its channel into and out of the switch twice: (h + 1) channels' worth
  // on its NVLink. Across nodes the search steps through the network speeds, and its
  // second pass raises the intra-node speed of trees above the NIC's up to what NVLink
  // allows (search.cc: "increase bwIntra for trees").
  const double s = SpeedStep(tree ? inter : intra, nvlink_search_ / (h + 1));
  const double pipelined = op == CommOp::kAllReduce ? 2.0 : (g.per_node - 1.0) / g.per_node;
  double bw = s * kNvlsEfficiency[generation_] * (h - 1) / h * pipelined;
  if (tree) {
    bw = std::min(bw, SpeedStep(inter, nic_) * (g.nodes <= 2 ? 2 : 1));
    bw = std::min(bw, kPerChNvlsTreeBw[generation_][NodesIndex(g.nodes)]);
  }
  return h * bw;
}

NcclChoice NcclTuner::EvaluateNvls(CommOp op, const GroupShape& g, double bytes) const {
  assert(NvlsFits(op, g) && bytes > 0);
  NcclChoice c;
  const bool tree = g.nodes > 1;
  c.algorithm = tree ? AllReduceAlgorithm::kNvlsTree : AllReduceAlgorithm::kNvls;
  c.protocol = NcclProtocol::kSimple;
  c.channels = c.max_channels = generation_ < 3 ? kNvlsChannelsHopper
                                : tree          ? kNvlsChannelsBlackwellNet
                                                : kNvlsChannelsBlackwellNode;
  c.heads = NvlsHeads(g);
  const uint64_t n = bytes < 1.8e19 ? static_cast<uint64_t>(bytes) : UINT64_MAX;
  const double latency_us = kNvlsHopUs + (tree ? 2 * Log2Floor(g.nodes) * kNvlsTreeNetHopUs : 0.0);
  const double ratio = op == CommOp::kAllReduce ? double(g.ranks) / Steps(op, g.ranks) : 1.0;
  // NCCL corrects NVLSTree by the trees' table on Blackwell with an x86 host only.
  const int log_size = Log2Floor(n >> 6);
  double correction = 1;
  if (tree && generation_ >= 3 && x86_host_ && log_size >= 0 && log_size < 24) {
    correction = kTreeCorrection[kSimple][log_size];
  }
  if (tree) {
    // The chunk calcCollChunking picks, a whole one per op unless the buffer is smaller.
    const double ops = double(c.channels) * c.heads;
    double chunk = g.nodes >= 4 ? kNvlsChunk / 2 : kNvlsChunk;
    if (bytes < 4 * ops * chunk && chunk > kNvlsChunk / 2) chunk = kNvlsChunk / 2;
    if (bytes < ops * chunk && chunk > kNvlsChunk / 4) chunk = kNvlsChunk / 4;
    chunk = std::min(chunk, bytes / ops);
    c.fill_s = 2 * Log2Floor(g.nodes) * c.channels * chunk / (1e9 * nic_);
  }
  c.launch_s = 0;  // NCCL's base latency of NVLS and NVLSTree
  c.hops_s = latency_us * 1e-6;
  c.cap_algbw = 1e9 * NvlsBusBw(op, g) * ratio;
  c.estimate_s = c.hops_s + bytes / (c.cap_algbw * correction);
  c.stretch = 1 / correction;
  return c;
}

NcclChoice NcclTuner::Evaluate(CommOp op, const GroupShape& g, double bytes,
                               AllReduceAlgorithm algorithm, NcclProtocol protocol) const {
  assert(g.ranks >= 2 && bytes > 0 && protocol != NcclProtocol::kAuto);
  if ((algorithm == AllReduceAlgorithm::kNvls || algorithm == AllReduceAlgorithm::kNvlsTree) &&
      NvlsFits(op, g)) {
    return EvaluateNvls(op, g, bytes);
  }
  const int a = algorithm == AllReduceAlgorithm::kTree ? kTreeIdx : kRingIdx;
  const int p = ProtocolIndex(protocol);
  NcclChoice c;
  c.algorithm = a == kTreeIdx ? AllReduceAlgorithm::kTree : AllReduceAlgorithm::kRing;
  c.protocol = protocol;
  c.max_channels = MaxChannels(g);
  // Whole bytes, as NCCL counts them (saturated: a double above 2^64 does not convert).
  const uint64_t n = bytes < 1.8e19 ? static_cast<uint64_t>(bytes) : UINT64_MAX;
  double latency_us = kBaseLatencyUs[a][p] + Latency(op, g, a, p);
  if (a == kRingIdx && p == kSimple && g.nodes > 1 && op == CommOp::kAllReduce &&
      n / (static_cast<uint64_t>(c.max_channels) * g.ranks) >= 64) {
    latency_us *= generation_ == 0 ? 1.9 : 1.4;  // the ring's plateau
  }
  // NCCL's caps count the channels of its topology search; the communicator has twice
  // as many (src/graph/connect.cc duplicates them).
  const int graph_channels = std::max(1, c.max_channels / 2);
  double bus = BusBw(op, g, a, p, graph_channels);
  const int log_size = Log2Floor(n >> 6);
  double correction = 1;
  if (a == kTreeIdx && log_size >= 0 && log_size < 23) correction = kTreeCorrection[p][log_size];
  const double ratio = a == kRingIdx ? double(g.ranks) / Steps(op, g.ranks) : 0.5;
  // Channels this size runs on (topoGetAlgoInfo).
  const uint64_t threshold = kThreadThreshold[p] * (a == kRingIdx && p == kLL ? g.ranks : 1);
  c.channels = c.max_channels;
  while (c.channels >= 2 && n < c.channels * kMaxThreads[p] * threshold) --c.channels;
  c.launch_s = kBaseLatencyUs[a][p] * 1e-6;
  c.hops_s = latency_us * 1e-6 - c.launch_s;
  c.estimate_s = latency_us * 1e-6 + bytes / (1e9 * bus * correction * ratio);
  c.cap_algbw = 1e9 * CapBusBw(g, a, p, graph_channels) * ratio;
  c.stretch = static_cast<double>(c.max_channels) / c.channels / correction;
  return c;
}

// NCCL enables LL128 by default only where its graphs reach the NICs through a PCIe switch
// (path type <= PXB, or <= PXN on Hopper and later; tuning.cc, ncclTopoTuneModel, "Enable
// LL128 by default only on ..."). A Grace superchip's NICs hang off the CPU (path PHB:
// paths.cc, "On C2C platforms we can still use GDRDMA on NICs connected to the CPUs",
// NCCL_NET_GDR_C2C), so across nodes of GH200 / GB200 / GB300 LL128 stays off unless
// forced (NCCL_PROTO).
bool NcclTuner::Ll128ByDefault(const GroupShape& g) const { return g.nodes <= 1 || x86_host_; }

NcclChoice NcclTuner::Choose(CommOp op, const GroupShape& g, double bytes,
                             AllReduceAlgorithm algorithm, NcclProtocol protocol) const {
  const bool nvls_asked =
      algorithm == AllReduceAlgorithm::kNvls || algorithm == AllReduceAlgorithm::kNvlsTree;
  const bool nvls_ok =
      NvlsFits(op, g) && (protocol == NcclProtocol::kAuto || protocol == NcclProtocol::kSimple);
  if (nvls_asked && nvls_ok) return EvaluateNvls(op, g, bytes);
  if (nvls_asked) algorithm = AllReduceAlgorithm::kRing;
  const bool tree_ok = op == CommOp::kAllReduce;
  const bool hierarchical = algorithm == AllReduceAlgorithm::kHierarchical;
  NcclChoice best;
  bool found = false;
  // NCCL's order (tree before ring, LL before LL128 before Simple); strictly faster wins.
  for (int a : {kTreeIdx, kRingIdx}) {
    const AllReduceAlgorithm alg =
        a == kTreeIdx ? AllReduceAlgorithm::kTree : AllReduceAlgorithm::kRing;
    if (a == kTreeIdx && (!tree_ok || (algorithm != AllReduceAlgorithm::kAuto &&
                                       algorithm != AllReduceAlgorithm::kTree))) {
      continue;
    }
    if (a == kRingIdx && algorithm == AllReduceAlgorithm::kTree && tree_ok) continue;
    for (int p : {kLL, kLL128, kSimple}) {
      if (protocol != NcclProtocol::kAuto && ProtocolIndex(protocol) != p) continue;
      if (protocol == NcclProtocol::kAuto && p == kLL128 && !Ll128ByDefault(g)) continue;
      if (hierarchical && protocol == NcclProtocol::kAuto && p != kSimple) continue;
      const NcclChoice c = Evaluate(op, g, bytes, alg, ProtocolOf(p));
      if (!found || c.estimate_s < best.estimate_s) best = c;
      found = true;
    }
  }
  // NVLS and NVLSTree come after tree and ring in NCCL's order.
  if (algorithm == AllReduceAlgorithm::kAuto && nvls_ok) {
    const NcclChoice c = EvaluateNvls(op, g, bytes);
    if (c.estimate_s < best.estimate_s) best = c;
  }
  if (hierarchical) best.algorithm = AllReduceAlgorithm::kHierarchical;
  return best;
}

}  // namespace meshsim
