// Collectives on TPU slices (intra_node.kind torus), as XLA runs them over the ICI torus
// and the DCN between slices. NCCL's tuner plays no part (TPUs do not run NCCL): no
// protocol, channels or launch cost; each step costs the hop latency (intra_node.latency_us
// per ICI hop, inter_node.latency_us per DCN step).
//
// A group's members in one slice form a sub-grid: along each torus dimension d the group
// takes n_d distinct coordinates. Dimension d is a ring for the group when it takes the
// whole dimension and the dimension has wrap-around links (TorusSpec::Ring); otherwise a
// line. Members spaced k chips apart (a mesh axis placed on the outer factor of a split
// dimension) take k hops per step and share each link with k - 1 other groups (which run
// the same collective at the same time): b / k and k a below. Notation: B the collective's bytes
// (collective.h's convention), b the bandwidth of one ICI link in one direction (gbps_per_link x
// efficiency.network), a the hop latency.
//
//  - Along one dimension of n chips, the bidirectional ring: the buffer is split in two
//    halves, one reduced clockwise and one counter-clockwise, so both directions of every
//    link carry data (Jouppi et al., "TPU v4: An Optically Reconfigurable Supercomputer",
//    ISCA 2023, arXiv 2304.01433, section 2; Google Cloud TPU system architecture docs):
//        reduce-scatter = all-gather = (n-1)/n * B / (2b) + (n-1) a
//        all-reduce                  = 2(n-1)/n * B / (2b) + 2(n-1) a
//    On a line (no wrap-around) each half-ring's closing edge runs back along the line,
//    so the two halves share the links: the same with b in place of 2b (n = 2: one link
//    pair, both directions busy: B / b for an all-reduce).
//  - Across several dimensions, the multi-dimensional algorithm (reduce-scatter along x,
//    then y on the 1/n_x shards, then z, and all-gather back in reverse order):
//        reduce-scatter = sum_i (n_i-1)/n_i * B_i / (f_i b) + (n_i-1) a,
//        B_i = B / (n_1 ... n_{i-1}),  f_i = 2 on a ring, 1 on a line;
//        all-gather = reduce-scatter; all-reduce = their sum.
//    The dimensions run one after the other (x, y, z); XLA can also split the buffer so
//    that all dimensions run at once, which this does not model (a conservative bound).
//  - Groups across slices (DCN) run hierarchically, as XLA's multi-slice collectives:
//    an all-reduce reduce-scatters inside each slice (as above), all-reduces each shard
//    over a DCN ring of the slices' chips at the same place, then all-gathers inside each
//    slice; a reduce-scatter does the first two steps, an all-gather the last two in
//    reverse. A DCN ring of s slices: RingFactor(op, s) * B' / d + steps x inter latency,
//    d the DCN bandwidth per chip: gbps_per_nic x nics_per_node / chips per slice
//    (x efficiency.nic; every chip of a slice is assumed to use the DCN at once).
//  - All-to-all in a slice: dimension-order routing loads a + link of dimension d with
//    B/n_d * k(k+1)/2 on a ring (k = floor(n_d/2) destinations the + way) and
//    B/n_d * floor(n_d/2) * ceil(n_d/2) on a line; the slowest dimension sets the time,
//    plus one hop latency. Across slices: (s-1)/s * B over the DCN per chip.
//  - Sendrecv and ring shifts: the message over the dimension-order route (hops x a +
//    bytes / b), or over the DCN between slices (inter latency + bytes / NIC bandwidth).
// Groups whose members in a slice are not a sub-grid, or with unequal members per slice,
// run as one bidirectional ring over the members in the given order, along routes.
#pragma once

#include <span>
#include <vector>

#include "sim/core/collective_kinds.h"
#include "sim/hw/cluster_spec.h"
#include "sim/net/collective.h"
#include "sim/net/flow_phases.h"

namespace meshsim {

// Where a group lies on the torus. Precondition of its users: cluster.Torus().
struct TorusGroup {
  struct Stage {
    int dim = 0;
    int n = 1;          // chips of the group along dim (> 1)
    bool ring = false;  // n x stride = the whole dimension, with wrap-around links
    // Hops between neighbouring members (their largest gap): a group every `stride`
    // chips shares each link with stride - 1 interleaved groups, so its steps take
    // stride hops at b / stride.
    int stride = 1;
  };
  int slices = 1;
  int per_slice = 0;          // members in each slice
  bool grid = false;          // equal members per slice, a sub-grid in each
  std::vector<Stage> stages;  // dimensions the group spans in a slice, x first
};
TorusGroup LocateTorusGroup(const ClusterSpec& cluster, std::span<const int> gpus);

// The closed-form (alpha-beta) cost of a collective on a torus cluster (see above).
// Precondition: cluster.Torus(), 2+ GPUs, bytes > 0.
CollectiveCost TorusCollectiveCost(const ClusterSpec& cluster, CommOp op, std::span<const int> gpus,
                                   double bytes);

// The same collective as phases of point-to-point transfers for the flow-level network:
// per stage, a forward and a backward ring along every line of the group (each with half
// of the stage's data), DCN rings per place in the slice; sendrecv, ring shifts and
// all-to-all as flow_phases.h runs them, with the ICI hop latency.
// Precondition: cluster.Torus(), 2+ GPUs, bytes > 0.
std::vector<Phase> TorusCollectivePhases(const ClusterSpec& cluster, CommOp op,
                                         std::span<const int> gpus, double bytes);

}  // namespace meshsim
