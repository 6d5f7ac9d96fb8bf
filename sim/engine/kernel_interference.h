// The compute slowdown each collective of a program causes, from the SMs its NCCL kernel
// holds (CommInterference::kFromKernel; README "Compute–communication interference").
#pragma once

#include <vector>

#include "sim/hw/cluster_spec.h"
#include "sim/net/nccl_tuner.h"
#include "sim/schedule/program.h"

namespace meshsim {

// Per signature of `program` (Program::signatures(), ReplayOptions::comm_slowdown): the
// slowdown of the collectives of that signature. Where `cluster`'s entry for their kind
// is kFromKernel and NCCL runs them (an all-reduce, all-gather or reduce-scatter of 2+
// ranks and > 0 bytes on a cluster that is not a torus), the slowdown of the SMs of
// NCCL's choice for them, OfHeldSms(channels, gpu.sms): one CTA per channel; 0 where it moves
// nothing. A torus (no NCCL) gives kFromKernel kinds the study's mean, kStudyMean. Other
// collectives: -1 (their kind's fixed value). `cluster`: as the network sees it
// (ClusterSpec::NetworkView); `nccl`: what the network's tuner may choose. Empty where no
// kind is kFromKernel. One tuner call per distinct (kind, group shape, bytes).
std::vector<float> CommSlowdowns(const ClusterSpec& cluster, const NcclOptions& nccl,
                                 const Program& program);

}  // namespace meshsim
