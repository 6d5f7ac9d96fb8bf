#!/usr/bin/env python3
"""NCCL's own tuner model at the older versions two public A100 curves ran with, for an
all-reduce over two 8-GPU nodes: which algorithm and protocol that version picks per size,
and the time its model estimates. A check for scripts/nccl_curves.py (results/nccl.md), not
a part of meshsim: meshsim's tuner (sim/net/nccl_tuner.*) restates NCCL 2.30.7.

Each constant names its source as file@tag:function in NVIDIA/nccl. The model, as both
versions compute it (src/graph/tuning.cc: ncclTopoTuneModel, ncclTopoGetAlgoTime;
src/enqueue.cc: topoGetAlgoInfo, which takes the cheapest enabled pair):

  busbw  ring: channels x bwIntra (nNodes <= 2 uses the graph's intra speed);
               LL min(llMaxBw, 1/4 of it), LL128 min(0.92 of it, channels x cap)
         tree: min(0.92 x channels x bwIntra, channels x perChMaxTreeBw);
               LL min(1/3.8 of it, llMaxBw), LL128 min(120/128 of it, channels x cap)
  algbw  ring: busbw x nRanks / (2 (nRanks - 1)); tree: busbw / 2;
         tree: x treeCorrectionFactor[protocol][log2(bytes / 64)] below 2^23
  lat    ring: base + (nsteps - nInter) x intra + nInter x inter, nInter = 2 nNodes (both
               versions; NCCL 2.30.7 has 2 (nNodes - 1)); Simple x plateau where it applies
         tree: base + 2 ((ppn - 1) x intra + log2(nNodes) x inter)
  time   lat + bytes / (1000 x algbw) us

The graphs (channels and speeds of NCCL's topology search, src/graph/search.cc@tag:
ncclTopoCompute) are derived in GRAPHS below for each curve's machine.
"""
import math

RING, TREE = "ring", "tree"
LL, LL128, SIMPLE = "LL", "LL128", "Simple"
PROTOCOLS = (LL, LL128, SIMPLE)

# src/graph/tuning.cc@<tag>: treeCorrectionFactor (the same table in both versions), indexed
# by protocol and log2(bytes / 64) below 23.
TREE_CORRECTION = {
    LL: (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0,
         1.0, 1.0, 1.0),
    LL128: (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9,
            .9, .9, 1.0, 1.0),
    SIMPLE: (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7,
             .8, .9, .9),
}

# Per version, for Ampere GPUs across two nodes of an AMD host (both machines: DGX A100 and
# OCI BM.GPU4.8 have AMD EPYC CPUs; the OCI topology file says vendor="AuthenticAMD").
VERSIONS = {
    "2.12.12": dict(
        tag="v2.12.12-1",
        # tuning.cc@v2.12.12-1: baseLat (Tree, Ring) x (LL, LL128, Simple)
        base={TREE: (4.4, 4.4, 0.0), RING: (3.6, 10.0, 8.4)},
        # tuning.cc@v2.12.12-1: hwLat[NVLINK], hwLat[NET]
        intra={TREE: (.52, 1.25, 28.0), RING: (.47, 1.9, 3.4)},
        inter={TREE: (5.0, 8.5, 28.0), RING: (2.7, 4.0, 28.0)},
        ll_intra_factor=1.8,  # ncclTopoTuneModel: "if (nNodes > 1 && p == LL) intraLat *= 1.8"
        net_overhead=0.0,     # no getNetOverhead in 2.12
        plateau=1.9,          # ncclTopoGetAlgoTime: x1.9 when bytes >= nRanks / 16 x 65536
        plateau_rule="ranks",
        ll_max=22.5,          # llMaxBws[AMD][N2]
        tree_cap=23.6,        # perChMaxTreeBws[Ampere][N2]
        ring_ll128_cap=20.0,  # ll128MaxBwPerCh
        tree_ll128_cap=20.0,  # ll128MaxBwPerCh
        busbw_cap=235.0,      # "if (compCap80) busBw = std::min(busBw, 235.0f)"
    ),
    "2.19.3": dict(
        tag="v2.19.3-1",
        base={TREE: (6.8, 14.0, 0.0), RING: (6.6, 14.0, 8.4)},
        intra={TREE: (.6, 1.25, 28.0), RING: (.6, 1.9, 3.4)},
        inter={TREE: (5.0, 8.5, 28.0), RING: (2.7, 4.0, 14.0)},
        ll_intra_factor=1.0,
        net_overhead=2.0,     # getNetOverhead: AMD x86 2 us; x3 for Simple; rings only
        plateau=1.4,          # ncclTopoGetAlgoTime: x1.4 (compCap >= 80) when
        plateau_rule="chan",  # bytes / (comm channels x nRanks) >= 64
        ll_max=22.5,          # llMaxBws[AMD][N2]
        tree_cap=23.6,        # perChMaxTreeBws[Ampere][N2]
        ring_ll128_cap=20.0,  # perChMaxRingLL128Bws[Ampere][N2]
        tree_ll128_cap=20.0,  # perChMaxTreeLL128Bws[Ampere][N2]
        busbw_cap=math.inf,
    ),
}

# NCCL's topology search for each curve's two nodes (search.cc@tag: ncclTopoCompute):
#  - OCI BM.GPU4.8, NCCL 2.19.3 (oci-hpc-oke's NCCL_TOPO_FILE, BM.GPU.A100-v2.8.xml: per GPU
#    one dual-port 100 Gb/s NIC, 12.5 GB/s a port, under its PCIe switch; NVLink 12 x 20 GB/s,
#    topo.h SM80_NVLINK_BW). speedArrayInter's first step <= 12.5 is 12; a channel takes
#    one port (ncclTopoSearchRecNet), MAXCHANNELS / 2 = 16 channels fit (16 x 12 of 240 GB/s
#    of NVLink; two ports share the NIC's Gen4 x16 link, 24 GB/s: 2 x 12). Rings stay at 12
#    (no port carries 15). Trees (BALANCED_TREE; SM80 keeps it) raise bwIntra in pass 2 to
#    15 (16 x 15 = 240 fits, 16 x 18 does not): ring 16 x 12, tree 16 x 15/12. connect.cc
#    duplicates them: 32 channels. GPU and NIC share PCIe switches (PXB): LL128 enabled.
#  - gcm's two nodes, NCCL 2.12.12: the log does not name the NICs; taken as DGX A100's 8 x
#    200 Gb/s (25 GB/s), one per GPU: speedArrayInter's step 24, 8 channels (8 x 24 of 240);
#    trees raise bwIntra to 30 (8 x 30 = 240), not 48: ring 8 x 24, tree 8 x 30/24; 16
#    channels.
GRAPHS = {
    "oci": dict(version="2.19.3", ranks=16, nodes=2, comm_channels=32,
                ring=dict(channels=16, bw_intra=12.0), tree=dict(channels=16, bw_intra=15.0)),
    "gcm": dict(version="2.12.12", ranks=16, nodes=2, comm_channels=16,
                ring=dict(channels=8, bw_intra=24.0), tree=dict(channels=8, bw_intra=30.0)),
}


def busbw(v, g, algorithm, protocol):
    """Bus bandwidth (GB/s) NCCL's model credits (algorithm, protocol) with."""
    graph = g[algorithm]
    ch = graph["channels"]
    bw = min(ch * graph["bw_intra"], v["busbw_cap"])
    if algorithm == RING:
        if protocol == LL:
            return min(v["ll_max"], bw / 4)
        if protocol == LL128:
            return min(bw * 0.92, ch * v["ring_ll128_cap"])
        return bw
    bw = min(bw * 0.92, ch * v["tree_cap"])
    if protocol == LL:
        return min(bw / 3.8, v["ll_max"])
    if protocol == LL128:
        return min(bw * 120 / 128, ch * v["tree_ll128_cap"])
    return bw


def latency(v, g, algorithm, protocol):
    """NCCL's model latency (us) of an all-reduce before the plateau factor."""
    p = PROTOCOLS.index(protocol)
    intra, inter = v["intra"][algorithm][p], v["inter"][algorithm][p]
    if protocol == LL:
        intra *= v["ll_intra_factor"]
    ranks, nodes = g["ranks"], g["nodes"]
    if algorithm == RING:
        overhead = v["net_overhead"] * (3 if protocol == SIMPLE else 1)
        steps, inter_steps = 2 * (ranks - 1), 2 * nodes
        return (v["base"][RING][p] + (steps - inter_steps) * max(intra, overhead) +
                inter_steps * inter)
    return v["base"][TREE][p] + 2 * ((ranks // nodes - 1) * intra +
                                     int(math.log2(nodes)) * inter)


def estimate_us(v, g, algorithm, protocol, nbytes):
    """NCCL's model time (us) of an all-reduce of nbytes: ncclTopoGetAlgoTime."""
    ranks = g["ranks"]
    bw = busbw(v, g, algorithm, protocol) * (ranks / (2 * (ranks - 1)) if algorithm == RING
                                               else 0.5)
    log_size = int(math.log2(nbytes >> 6))
    if algorithm == TREE and log_size < 23:
        bw *= TREE_CORRECTION[protocol][log_size]
    lat = latency(v, g, algorithm, protocol)
    if algorithm == RING and protocol == SIMPLE:
        plateau = (nbytes >= ranks / 16 * 65536 if v["plateau_rule"] == "ranks" else
                   nbytes / (g["comm_channels"] * ranks) >= 64)
        lat *= v["plateau"] if plateau else 1
    return lat + nbytes / (1000 * bw)


def choose(curve, nbytes):
    """(algorithm, protocol, estimate us) the curve's NCCL version picks for nbytes."""
    g = GRAPHS[curve]
    v = VERSIONS[g["version"]]
    options = [(estimate_us(v, g, a, p, nbytes), a, p) for a in (TREE, RING) for p in PROTOCOLS]
    time, algorithm, protocol = min(options)
    return algorithm, protocol, time


def main():
    for curve, g in GRAPHS.items():
        print(f"# {curve}: NCCL {g['version']}")
        for k in range(16, 33):
            nbytes = 1 << k
            algorithm, protocol, time = choose(curve, nbytes)
            busbw_gbps = nbytes / time / 1e3 * 2 * (g["ranks"] - 1) / g["ranks"]
            print(f"{nbytes:>12} {algorithm}/{protocol:<6} {time:10.1f} us {busbw_gbps:7.2f} GB/s")


if __name__ == "__main__":
    main()
