#!/usr/bin/env python3
"""Compares `meshsim bench-collective` with public nccl-tests output; writes results/nccl.md
and results/nccl.png.

The measured curves below are copied from public nccl-tests output (busbw, out-of-place
column, GB/s); each names its source, hardware and NCCL settings. They are a check, not a
fit: nothing in meshsim was set from them (NCCL's constants come from NCCL's source, the
link efficiencies from the 1 GiB figures in the topology files' headers).

Usage: scripts/nccl_curves.py [--meshsim build/meshsim] [--out results/nccl.md]
"""
import argparse
import os
import subprocess
import sys

import nccl_model_versions

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
LO, HI = 64 * KIB, 4 * GIB  # the acceptance range
TOLERANCE = 0.15


def sizes(first, count):
    return [first << i for i in range(count)]


# How CoreWeave ran its GB200 curves: the commit that published them (bee97e7, 2025-05-05,
# "feat: Add gb200 example with performance") ran the NCCL 2.26.2 image with NVLink SHARP
# and CollNet off, in both of its GB200 jobs.
COREWEAVE_ENV = (
    "Run with NCCL_NVLS_ENABLE=0 and NCCL_COLLNET_ENABLE=0: the commit that published the "
    "figures (bee97e7, 'feat: Add gb200 example with performance') sets both in its GB200 "
    "jobs (mpi-operator/nccl-test-distributed-gb200-nvl72-mpijob.yaml, "
    "slurm/nccl-test-distributed-gb200-nvl72-enroot.slurm; image "
    "nccl-tests:12.8.1-devel-ubuntu22.04-nccl2.26.2-1-0708d2e, all_reduce_perf -b 512M -e 8G), "
    "so NCCL chose among rings and trees; meshsim runs with `--nvls off`."
)

# name, scale, title, source, hardware, meshsim arguments, in the acceptance, {bytes: busbw}
CURVES = [
    dict(
        name="a100-8-gcm", scale=8, check=True,
        nccl="2.16.2 (the log's header)",
        title="all_reduce, 8 x A100-SXM4-80GB, one node (NCCL 2.16.2)",
        source="facebookresearch/gcm, gcm/tests/health_checks_tests/test_check_nccl.py "
               "(`sample_single_success_output`, all_reduce_perf -b 32M -e 1G; seen in the "
               "fork theap06/gcm at 54e1b1d): https://github.com/facebookresearch/gcm",
        hardware="8 x A100-SXM4-80GB on NVSwitch (one node; host names of Meta's FAIR "
                 "cluster)",
        args=["--cluster", "topologies/selene-a100.yaml", "--gpus", "8"],
        measured=dict(zip(sizes(32 * MIB, 6),
                          [170.31, 210.68, 204.26, 223.05, 226.63, 231.72]))),
    dict(
        name="a100-8-note-mpi", scale=8, check=True,
        nccl="not stated (pip package nvidia-nccl-cu12)",
        title="all_reduce, 8 x A100-SXM4-80GB, one node, one process per GPU (mpirun -np 8)",
        source="a public GitHub Markdown note (in Chinese) on building and running "
               "nccl-tests, host `thanos`; found in the search service's code index, which "
               "does not name its repository (file id 33201577724). Second run of the note "
               "(`mpirun -np 8 ... all_reduce_perf -b 8 -e 4G -f 2 -g 1`)",
        hardware="8 x A100-SXM4-80GB, NVLink 12 x 25 GB/s (`nvidia-smi nvlink -s`), NVSwitch",
        args=["--cluster", "topologies/selene-a100.yaml", "--gpus", "8"],
        measured=dict(zip(sizes(64 * KIB, 17),
                          [3.60, 7.19, 16.59, 32.64, 48.43, 66.26, 89.89, 112.37, 137.68,
                           155.53, 190.73, 198.78, 211.78, 221.13, 227.91, 230.72, 232.81]))),
    dict(
        name="a100-8-note-g8", scale=8, check=False,
        nccl="not stated (pip package nvidia-nccl-cu12)",
        title="all_reduce, the same 8 GPUs driven by one process (-g 8)",
        source="the same note, first run (`all_reduce_perf -b 8 -e 4G -f 2 -g 8`): one "
               "thread launches on all 8 GPUs, which adds launch time at small sizes; shown "
               "for the spread between two runs on one machine, not in the acceptance",
        hardware="as above",
        args=["--cluster", "topologies/selene-a100.yaml", "--gpus", "8"],
        measured=dict(zip(sizes(64 * KIB, 17),
                          [2.80, 5.43, 10.43, 18.99, 34.88, 61.89, 70.70, 90.27, 112.72,
                           133.71, 168.86, 179.99, 196.34, 203.03, 227.83, 230.13, 232.44]))),
    dict(
        name="a100-16-gcm", scale=16, check=True,
        nccl="2.12.12 (the log's header)", version_model="gcm",
        title="all_reduce, 16 x A100-SXM4-80GB, two nodes (NCCL 2.12.12)",
        source="facebookresearch/gcm, gcm/tests/health_checks_tests/test_check_nccl.py "
               "(`sample_pairwise_success_output`, all_reduce_perf -b 32M -e 1G over two "
               "hosts)",
        hardware="2 nodes x 8 A100-SXM4-80GB (the NICs are not named in the log)",
        args=["--cluster", "topologies/selene-a100.yaml", "--gpus", "16"],
        measured=dict(zip(sizes(32 * MIB, 6),
                          [96.76, 131.49, 144.60, 169.69, 176.80, 182.80]))),
    dict(
        name="a100-16-oci", scale=16, check=True,
        nccl="2.19.3: the commit that published the output (oci-hpc-oke 1402938, 2024-02-13) "
             "runs it from manifests/a100-nccl-test.yaml, image "
             "nccl-tests:pytorch-23.10-nccl-2.19.3-1, with NCCL_TOPO_FILE "
             "(manifests/topology/BM.GPU.A100-v2.8.xml) and NCCL_CROSS_NIC=1",
        version_model="oci",
        title="all_reduce, 16 x A100-SXM4-40GB, two OCI BM.GPU4.8 nodes",
        source="oracle-quickstart/oci-hpc-oke, README.md (example output of the "
               "BM.GPU4.8 NCCL test manifest): https://github.com/oracle-quickstart/oci-hpc-oke",
        hardware="2 x OCI BM.GPU4.8: 8 x A100-SXM4-40GB, NVSwitch, 16 x 100 Gb/s RoCE, two "
                 "per GPU (NCCL_IB_HCA of oci-hpc-oke's BM.GPU4.8 nccl-test manifest lists 16 "
                 "devices): topologies/oci-bm-gpu4.8.yaml",
        args=["--cluster", "topologies/oci-bm-gpu4.8.yaml", "--gpus", "16"],
        measured=dict(zip(sizes(64 * KIB, 17),
                          [2.38, 4.48, 7.23, 13.29, 22.97, 39.64, 61.93, 90.25, 111.29, 139.08,
                           153.13, 163.20, 165.42, 156.41, 219.12, 220.16, 235.63]))),
    dict(
        name="h100-16-nvls", scale=16, check=True,
        nccl="2.26.2 (the issue's first post)",
        title="all_reduce, 16 x H100 80GB HBM3, two nodes, NCCL's default (NVLSTree)",
        source="NVIDIA/nccl-tests issue #309, first post (NCCL 2.26.2): "
               "https://github.com/NVIDIA/nccl-tests/issues/309. NCCL ran NVLSTree (NVLink "
               "SHARP in each node, a tree across, as the issue's maintainer reply explains); "
               "the same thread: 1 MiB and below ran ring/LL on one node, 2 MiB and up NVLS",
        hardware="2 x Dell XE9680: 8 x H100 SXM, NVSwitch with NVLink SHARP, 8 x CX-7 NDR "
                 "400 Gb/s",
        args=["--cluster", "topologies/dgx-h100.yaml", "--gpus", "16"],
        measured=dict(zip(sizes(64 * KIB, 17),
                          [3.63, 6.34, 10.10, 12.65, 27.33, 51.58, 83.33, 118.57, 169.67,
                           234.81, 269.98, 336.29, 392.35, 426.97, 448.90, 461.24, 466.52]))),
    dict(
        name="h100-1024-ring-ll128", scale=1024, check=True, nccl="not recorded",
        title="all_reduce, 1024 x H100 80GB HBM3, 128 nodes, NCCL_ALGO=Ring NCCL_PROTO=LL128 "
              "NCCL_MIN_NCHANNELS=32",
        source="NVIDIA/nccl-tests issue #322, first post: "
               "https://github.com/NVIDIA/nccl-tests/issues/322 (all_reduce_perf -b 1g -e 32g; "
               "sizes from 1 GiB only)",
        hardware="128 nodes x 8 H100 80GB HBM3, RoCE (NCCL_IB_GID_INDEX=3), NVLS disabled",
        args=["--cluster", "topologies/dgx-h100.yaml", "--gpus", "1024", "--algorithm", "ring",
              "--protocol", "LL128", "--channels", "32"],
        measured=dict(zip(sizes(GIB, 5), [110.84, 212.23, 338.16, 364.57, 367.29]))),
    dict(
        name="h100-8-nvls-peak", scale=8, check=False, nccl="not stated",
        title="all_reduce, 8 x H100 80GB HBM3, one node, NCCL's default (NVLS): the reported "
              "peak",
        source="NVIDIA/nccl-tests issue #290 (https://github.com/NVIDIA/nccl-tests/issues/290): "
               "a maintainer calls the single-node run's 476 GB/s (all_reduce_perf -b 128M "
               "-e 4G -g 8) the expected range for H100 with NVLink SHARP; the thread quotes "
               "the peak, not its size: placed at 4 GiB, the run's largest. In nccl-tests "
               "#212 NCCL's lead quotes ~480 GB/s peak busbw on 8 H100s. One point, not a "
               "curve: not in the acceptance",
        hardware="8 x H100 80GB HBM3 on NVSwitch (NVLink SHARP), InfiniBand cluster",
        args=["--cluster", "topologies/dgx-h100.yaml", "--gpus", "8"],
        measured={4 * GIB: 476.0}),
    dict(
        name="h200-8-nvls-peak", scale=8, check=False, nccl="2.20.3",
        title="all_reduce, 8 x H200, one node (NCCL 2.20.3, NVLS): the reported peak",
        source="NVIDIA/nccl-tests issue #272 (https://github.com/NVIDIA/nccl-tests/issues/272): "
               "all_reduce_perf -b 64k -e 4G -g 1, 'peak bandwidth of 475 GB/s' (placed at "
               "4 GiB, the run's largest size). One point: not in the acceptance",
        hardware="8 x H200 on NVSwitch (NVLink4, NVLink SHARP)",
        args=["--cluster", "topologies/dgx-h200.yaml", "--gpus", "8"],
        measured={4 * GIB: 475.0}),
    dict(
        name="b200-8-nvls-peak", scale=8, check=False, nccl="2.27.1",
        title="all_reduce, 8 x B200, one node (NCCL 2.27.1, NVLS): the reported figure",
        source="NVIDIA/nccl issue #1807 (https://github.com/NVIDIA/nccl/issues/1807): 'the "
               "all_reduce_perf performance of 8 B200s in a single machine ... Ours is 830+' "
               "(size not stated: placed at 4 GiB). One point: not in the acceptance",
        hardware="8 x B200 on NVSwitch (NVLink5, NCCL's maxBw 721.8 GB/s)",
        args=["--cluster", "topologies/dgx-b200.yaml", "--gpus", "8"],
        measured={4 * GIB: 830.0}),
    dict(
        name="h100-16-cw", scale=16, check=False, nccl="not stated",
        title="all_reduce, 16 x H100, two CoreWeave nodes, NCCL's default",
        source="coreweave/nccl-tests pull request #92, test plan: 'H100 8-GPU x 2-node base "
               "MPIJob ... 440.58 GB/s busbw @ 8G allreduce' "
               "(https://github.com/coreweave/nccl-tests/pull/92). One point, above 4 GiB",
        hardware="2 x 8 H100 (CoreWeave h100 nodes, InfiniBand)",
        args=["--cluster", "topologies/dgx-h100.yaml", "--gpus", "16"],
        measured={8 * GIB: 440.58}),
    dict(
        name="h100-32-roce", scale=32, check=False, nccl="2.19.3",
        title="all_reduce, 32 x H100, four nodes, RoCE (NCCL 2.19.3, NVLS on or off)",
        source="NVIDIA/nccl issue #1221, first post (https://github.com/NVIDIA/nccl/issues/1221): "
               "all_reduce_perf -b 4G -e 8G on 4 nodes of 8 x H100 with 8 x 400 Gb/s RoCE: "
               "'same busbw 320GB' with NCCL_NVLS_ENABLE=0 or 1 (430 with NVLS on 1-2 nodes). "
               "An approximate figure at both sizes; 32 GPUs: not in the acceptance. It checks "
               "that NVLSTree beyond two nodes is bound by its double binary tree's NIC bytes "
               "(twice those of two nodes) as on 8-GPU nodes it is",
        hardware="4 x 8 H100, 8 x 400 Gb/s RoCE NICs per node",
        args=["--cluster", "topologies/dgx-h100.yaml", "--gpus", "32"],
        measured={4 * GIB: 320.0, 8 * GIB: 320.0}),
    dict(
        name="b200-16-cw", scale=16, check=False, nccl="not stated",
        title="all_reduce, 16 x B200, two CoreWeave nodes, NCCL's default",
        source="coreweave/nccl-tests pull request #92, test plan: 'B200 8-GPU x 2-node base "
               "MPIJob ... 690.07 GB/s busbw @ 8G allreduce' "
               "(https://github.com/coreweave/nccl-tests/pull/92). One point, above 4 GiB",
        hardware="2 x 8 B200 (CoreWeave b200-8x nodes, InfiniBand)",
        args=["--cluster", "topologies/dgx-b200.yaml", "--gpus", "16"],
        measured={8 * GIB: 690.07}),
    dict(
        name="h200-1984-default", scale=1984, check=False, nccl="not stated",
        title="all_reduce, 1984 x H200, 248 nodes, NCCL's default algorithm",
        source="NVIDIA/nccl-tests issue #283, first post "
               "(https://github.com/NVIDIA/nccl-tests/issues/283): all_reduce_perf --minbytes "
               "512M --maxbytes 512M on 248 servers of 8 x H200, 'typically measuring around "
               "350G, but occasionally dropping below 300G'. One approximate figure: not in "
               "the acceptance",
        hardware="248 x 8 H200, 8 NICs per node (NCCL_IB_HCA mlx5_1..8); fabric not stated",
        args=["--cluster", "topologies/dgx-h200.yaml", "--gpus", "1984"],
        measured={512 * MIB: 350.0}),
    dict(
        name="gb200-72-rack", scale=72, check=False,
        nccl="2.26.2 (the image of the jobs)",
        title="all_reduce, 72 x GB200, one NVL72 rack (NCCL 2.26.2)",
        source="coreweave/nccl-tests, README.md, 'Expected Performance', GB200, 'Single Rack' "
               "(at cb86553; https://github.com/coreweave/nccl-tests). " + COREWEAVE_ENV +
               " 72 GPUs: between the goal's scales, not in the acceptance",
        hardware="one GB200 NVL72 rack: 18 trays x 4 GB200, one NVLink domain",
        args=["--cluster", "topologies/gb200-nvl72.yaml", "--gpus", "72", "--nvls", "off"],
        measured=dict(zip(sizes(512 * MIB, 5), [586.06, 681.17, 757.78, 839.16, 834.57]))),
    dict(
        name="gb200-144-racks", scale=144, check=True,
        nccl="2.26.2 (the image of the jobs)",
        title="all_reduce, 144 x GB200, two NVL72 racks (NCCL 2.26.2)",
        source="coreweave/nccl-tests, README.md, 'Expected Performance', GB200, '2 Racks' (at "
               "cb86553; https://github.com/coreweave/nccl-tests); sizes from 512 MiB only. " +
               COREWEAVE_ENV,
        hardware="two GB200 NVL72 racks joined by InfiniBand (4 x CX-7 400 Gb/s per tray)",
        args=["--cluster", "topologies/gb200-nvl72.yaml", "--gpus", "144", "--nvls", "off"],
        measured=dict(zip(sizes(512 * MIB, 6),
                          [493.94, 596.10, 680.30, 743.09, 793.06, 810.41]))),
    dict(
        name="gb200-1440-racks", scale=1440, check=True,
        nccl="2.26.2 (the image of the jobs)",
        title="all_reduce, 1440 x GB200, 20 NVL72 racks (NCCL 2.26.2)",
        source="coreweave/nccl-tests, README.md, 'Expected Performance', GB200, '20 Racks' (at "
               "cb86553; https://github.com/coreweave/nccl-tests); sizes from 512 MiB only. " +
               COREWEAVE_ENV,
        hardware="20 GB200 NVL72 racks joined by InfiniBand (4 x CX-7 400 Gb/s per tray)",
        args=["--cluster", "topologies/gb200-nvl72.yaml", "--gpus", "1440", "--nvls", "off"],
        measured=dict(zip(sizes(512 * MIB, 6),
                          [150.95, 218.85, 286.52, 346.38, 381.48, 405.74]))),
]


INTRO = """# Collectives against public nccl-tests curves

Regenerated by `bash scripts/nccl_curves.sh` (`scripts/nccl_curves.py`); do not edit by hand.

`meshsim bench-collective` runs one collective at a time on the flow-level network, as
nccl-tests does on an idle cluster, with NCCL's choice of algorithm (ring, tree, and NVLink
SHARP: NVLS in a node or NVLink domain, NVLSTree across nodes), protocol and channels from
NCCL's own tuner model (README, "Collectives as NCCL runs them"). This page compares it with
every public nccl-tests `all_reduce_perf` curve on A100, H100, H200, B200 and GB200 clusters
that we found, size by size, as bus bandwidth (busbw, nccl-tests' out-of-place column).
**Nothing was fitted to these curves**: NCCL's latencies, bandwidth fractions, caps, NVLS
efficiencies, search speeds, channel counts and chunk sizes are NCCL's published constants
(NVIDIA/nccl 2.30.7, master at 5067397c: `src/graph/tuning.cc`, `src/graph/search.cc`,
`src/graph/topo.h`, `src/enqueue.cc`, `src/transport/nvls.cc`); the link efficiencies of
the topologies come from the 1 GiB ring bus bandwidths in their header comments (230 GB/s
on 8 x A100, ~370 on 8 x H100, ~47 per NDR NIC), and the ring channel counts from NCCL's
init logs. The cluster files are the bundled `selene-a100.yaml` (DGX A100: 8 HDR NICs of
25 GB/s per node), `dgx-h100.yaml`, `dgx-h200.yaml`, `dgx-b200.yaml` and `gb200-nvl72.yaml`,
and for OCI's BM.GPU4.8 nodes `oci-bm-gpu4.8.yaml` (its source's 16 x 100 Gb/s NICs, two per
A100; NVLink and efficiencies as Selene's, not fitted to the curve). Single reported figures ("peak", one size) are listed too, outside
the acceptance. Each table's last column is what NCCL's tuner model (2.30.7's constants, as
meshsim restates them) says meshsim's choice takes, as bus bandwidth (`bench-collective`'s
"NCCL model" column): where meshsim's flow network and NCCL's own model part ways.

![busbw per size: public measurements (dots) and meshsim (lines); below, the error]({PNG})

{SUMMARY}

## What holds and what does not

The goal was every size from 64 KiB to 4 GiB within 15 % at 8, 16 and at least 128 GPUs.
On one A100 node it holds from 64 KiB to 4 MiB and from 64 MiB to 4 GiB; on one H100,
H200 or B200 node the reported NVLS peaks (476, 475, 830+ GB/s) are within 0.4 %; on two
H100 nodes with NCCL's default (NVLSTree) 15 of 17 sizes are within 15 % (mean 8.1 %; 9 of
17 and 14.5 % before NVLS was modelled), and the two 8 GiB figures of two H100 and two
B200 nodes are within 4.3 % and 1.1 % (-17 % and -46 % without NVLS). On two A100 nodes it
holds from 1 to 4 GiB on OCI's cluster (NCCL's tree over its 16 NICs) and from 64 MiB to 1
GiB on gcm's (NCCL's ring).
It does **not** hold:

- **8-32 MiB on one A100 node, +20-22 %** (one process per GPU): meshsim follows NCCL's
  model, which credits LL128 with 0.92 and Simple with all of the link at every size; the
  measured bus bandwidth ramps up more slowly (its slope between 8 and 32 MiB is ~180 GB/s,
  LL128 at ~0.78 of the link). No NCCL constant accounts for it: a ring's chunks (2 MiB per
  rank and channel for Simple) keep every link busy from the first step, so a pipeline
  fill does not apply on one node. The other public 8-GPU run (gcm, 32 MiB and up) is
  within 11 %. The same machine driven by one process for all 8 GPUs (`-g 8`, dotted) is
  20-57 % slower than with one process per GPU at the same sizes: the spread between two
  launch modes on one machine is larger than the goal.
- **Two OCI BM.GPU4.8 nodes, 256 KiB-512 MiB, +26-55 %**: the run used NCCL 2.19.3 (the
  image of the manifest in the commit that published it, with oci-hpc-oke's topology file
  and NCCL_CROSS_NIC=1). That version's own tuner model on that topology (printed under
  the curve: `scripts/nccl_model_versions.py`, constants of tuning.cc@v2.19.3-1, its
  search giving rings 16 channels at 12 GB/s and balanced trees 16 at 15/12) picks the
  tree at every size: LL to 128 KiB, LL128 from 256 KiB to 512 MiB, Simple from 1 GiB,
  where today's model switches to Simple at 512 MiB (2.19.3 still priced a tree/Simple
  hop at 28 us, 448 us in all, where 2.30.7 gives 8.4 + 84 us). The measured jump, 156
  GB/s at 512 MiB to 219 at 1 GiB, sits at that LL128-to-Simple switch: the run most
  likely ran NCCL's tree throughout, not a ring, and its version does not explain the
  misfit. What misses
  is the tree's LL128 speed: measured 111-165 GB/s from 16 to 512 MiB, NCCL 2.19.3's own
  estimate 138-192 (within 15 % at 128 KiB, 32-128 MiB and 1-4 GiB: 7 of 17 sizes),
  meshsim 158-227 to 256 MiB (242 at 512 MiB, where it has switched to Simple), whose
  tree moves LL128's wire bytes at its NVLink bound (two slices per channel
  out of each chain GPU: ~245 GB/s busbw with Simple, 0.94 of it with LL128) while NCCL's
  model credits 0.92 x 16 x 15 x 120/128 = 207. That the ring forced through meshsim
  (`--algorithm ring`) lands at +2 to +10 % at 16-256 MiB is a coincidence of its NIC bound
  (188) with the tree's measured LL128 speed, not what the run did. What held the run's
  LL128 tree below NCCL's own estimate needs its NCCL log, which the source does not
  give. The small-message floor is 36 us where NCCL's latency model
  (and meshsim) says 25 us; the same model matches the floor of 2 and 4 InfiniBand H100
  nodes (25 and 35 us, nccl-tests #309). On two H100 nodes 512 KiB and 1 MiB are +43 % and +19 %: the measured 512 KiB (12.7 GB/s) sits below
  the line through its neighbours (10.1 at 256 KiB, 27.3 at 1 MiB), where NCCL changes
  algorithm.
- The gcm run's older NCCL 2.12 stays on the ring on two DGX A100 nodes (8 x HDR NICs:
  8 search channels, whose per-channel tree cap, 8 x 23.6 GB/s, keeps the tree below the
  ring): 182.8 GB/s at 1 GiB, meshsim 183.1.
- **32 MiB on two A100 nodes (gcm, NCCL 2.12), +38 %**: meshsim runs LL128 there, as
  today's tuner model picks; the measured 650 us is close to what meshsim gives a Simple
  ring there (`--algorithm ring --protocol Simple`: 621 us). NCCL 2.12.12's own model
  (printed under the curve; DGX A100's 8 NICs assumed, the log names none) picks ring/LL128
  there too, to 128 MiB (its Simple ring pays 28 us per network hop and a 1.9x plateau),
  and estimates 469 us (+39 %): the run's version does not explain this size either.
- **At least 128 GPUs: 6 of 11 sizes in range within 15 %.** 1024 H100s over RoCE (ring
  and LL128 forced, from 1 GiB) take 19.4 ms at 1 GiB and 20.2 ms at 2 GiB, a floor of
  about 18 ms that NCCL's latency model (4.4 ms for 2046 LL128 steps) does not have; at
  4-16 GiB meshsim is within 10-13 %. Two GB200 NVL72 racks (144 GPUs, NVLS off as
  CoreWeave ran them) are within 15 % at all four sizes (-0.6 to -11.4 %; NCCL's tree to
  2 GiB, its ring above) and -12 % at 8-16 GiB. Twenty racks (1440 GPUs) are within 15 %
  at 4 GiB (+7.5 %) and +26 to +104 % at 512 MiB-2 GiB: NCCL's tree there is held by
  its per-channel cap (16 search channels x 24 GB/s = 384 GB/s; the curve's slope is
  ~430), but the measured curve has a fixed cost of ~4.6 ms (its time less its slope)
  where NCCL's tree latency is 688 us (below, "Where the misfits come from").
- **One GB200 NVL72 rack (72 GPUs, not in the goal), -6 to -16 %**: NCCL's Simple ring
  over the 72 GPUs (NVLS off): the fixed cost of NCCL's latency model, 8.4 + 142 x 3.4 us
  = 491 us, is the measured 487 us; the asymptote is 738 GB/s against 859, the
  topology's NVLink efficiency (0.82, DGX H100's 370 of 450 GB/s, assumed for NVLink5)
  against the 0.95 of 900 GB/s these racks reach. Setting it from this curve would fit
  the check; no other public NVLink5 ring figure was found.

What changed (this revision; before: the page at 9c46c74): each curve names the NCCL
version it ran with where its source says (the OCI run's, 2.19.3, found in the commit that
published it), and the two A100 two-node curves, whose versions are older than the tuner's
that meshsim restates (2.30.7), print what their own version's tuner model picks and
estimates per size (`scripts/nccl_model_versions.py`, constants of tuning.cc at v2.12.12-1
and v2.19.3-1, the topology search of search.cc at those tags worked out by hand for each
machine), and every table gives NCCL's model of meshsim's choice beside the simulated
figure (`bench-collective`'s new last column): on the three curves of 128 GPUs and more in
the acceptance meshsim's network lands within 2 % of that model at every size (1024 H100s
at 1 GiB: 201.7 against 199.5 GB/s; twenty GB200 racks: equal), so the misfits there are
NCCL's model's (on 1984 H200s, a check, meshsim's NVLSTree gives 218 GB/s where the model
says 325: its static routes on the fat tree, above), while on OCI's two nodes its
tree/LL128 runs above it (222 against 180 GB/s at 128 MiB; the run: 163). Neither version
changes the algorithm where meshsim misses: gcm's 2.12.12 picks ring/LL128 at 32 MiB as
today's model does, and OCI's 2.19.3 picks the tree at every size, LL128 up to 512 MiB
(today's model: up to 256 MiB), so a per-version tuner in meshsim was not added: it would
move one size (OCI's 512 MiB, from tree/Simple to tree/LL128, both 45-55 % above the run).
The GB200 curves ran 2.26.2, whose Blackwell tree caps (tuning.cc@v2.26.2-1,
perChMaxTreeBws: twice Hopper's, 82.8 and 72 GB/s per channel on two and more nodes) would
not bind where today's 42.8 and 24 do (16 x 24 = 384 GB/s between twenty racks): meshsim
keeps one set of constants, 2.30.7's, for every curve, and that curve's one size within 15
% (4 GiB) rests on the later row. Every meshsim figure on this page is unchanged.

The revision before (before it: the page at 6c34fd5): a node may have more NICs than
GPUs (`inter_node.nics_per_node` a multiple of `gpus_per_node`: each GPU owns that many,
each linked to it), NCCL's search gives every one of them channels and the rings and trees
cross nodes on all of them (README, "Collectives as NCCL runs them"); the OCI curve runs on
its own cluster file, `topologies/oci-bm-gpu4.8.yaml` (16 x 100 Gb/s, two per A100), where
it ran on DGX A100's (8 x 200 Gb/s): 10 -> 4 of 17 sizes within 15 %, mean 14.4 -> 29.0 %
(1-4 GiB now within 15 %, 256 KiB-512 MiB not: above). Every other curve is unchanged, and
so are the step times of every bundled experiment (`meshsim run X --no-trace -q
--reproducible --summary -` over workloads/experiments/*.yaml, md5 before and after).

The revision before that (before it: the page at 7e7a3ba): NCCL's topology search gives a
channel one NIC, and on an NVSwitch it finds no more channels than the GPU's NVLink, as
it counts it, carries at its speed step (`src/graph/search.cc`, ncclTopoCompute; README
"Collectives as NCCL runs them"). meshsim gave each of a GB200 rack's 72 NICs a channel
(64 channels, MAXCHANNELS); NCCL's search finds 16 (721.8 GB/s of NVLink holds 15 x 48
or 16 x 45.1 GB/s), so 32 channels on 16 NICs. Its tree's per-channel cap (tuning.cc,
perChMaxTreeBws: 24 GB/s for Blackwell beyond two nodes since NCCL 2.28) then holds the
tree between twenty racks to 16 x 24 = 384 GB/s busbw, where 32 search channels left it
NVLink-bound (743): twenty racks 0 -> 1 of 4 sizes within 15 % (mean 160.5 -> 48.4 %,
max 233 -> 104 %), two racks 4 of 4 (mean 5.3 -> 6.3 %: their tree's cap, 16 x 42.8 GB/s,
now meets NVLink's bound). Rings and trees across nodes use the search's NICs (one per
search channel). Every other curve is unchanged (8-GPU nodes with 8 NICs keep 8 search
channels, 16 channels).

An earlier revision (before it: the page at f1d6701): CoreWeave ran its GB200 curves
with NVLink SHARP and CollNet off (NCCL_NVLS_ENABLE=0 and NCCL_COLLNET_ENABLE=0 in both
GB200 jobs of the commit that published them, bee97e7), so meshsim now runs them with
`bench-collective --nvls off` (new) instead of NVLS / NVLSTree: one rack 1 -> 3 of 4
sizes within 15 % (mean 29.0 -> 9.9 %; fixed cost 25 -> 491 us, measured 487), two racks
2 -> 4 of 4 (12.8 -> 5.3 %), twenty racks mean 222.5 -> 160.5 %. Two model fixes go with
it. The GB200 scale-out fabric is rail-optimized (NVIDIA's NVL72 reference architecture;
`topologies/gb200-nvl72.yaml`): on the fat tree of 64-port switches the static routes of
a ring between two racks shared spine links, 354 GB/s busbw at 4 GiB, now 658. Across
nodes of Grace superchips the tuner leaves LL128 off, as NCCL's LL128 enable rule does
where the NICs hang off the CPU (README): two racks' 512 MiB-1 GiB move from tree/LL128
(+23 %, +9 %) to tree/Simple (+5 %, +3 %). Every other curve is unchanged, and so are the
step times of the 14 bundled GB200 experiments (`meshsim run X --no-trace -q
--reproducible --summary -`, before and after: 0.000 %).

The revision before those (before it: results at 2d8e844) added NVLS and NVLSTree. For NVLSTree a
pipeline fill that NCCL's model lacks is added (README): a chunk crosses each tree hop
whole at its NIC share, 2 x 16 x 128 KiB / 47 GB/s = 89 us on two H100 nodes from 64 MiB
(45 us from 8 MiB); without it NCCL's model alone is +22 to +37 % at 32-128 MiB on two
H100 nodes, with it within 9 %. The A100 curves and the 1024-GPU ring were unchanged.
That revision also added the fixed-cost / asymptote split (columns of the table), the 32-GPU
RoCE point (nccl #1221) and the 1984-H200 point (nccl-tests #283), and fixed the fabric's
static routes: d-mod-k chose a spine by the destination's GPU number, and on a rail
switch every destination has the same local rank, so a rail's traffic to another group
of nodes shared 1/8 of the spine uplinks (sim/hw/topology.cc, Route); it has since chosen by
the destination NIC's port on its switch, as InfiniBand's fat-tree routing numbers
hosts. NCCL's tree and NVLSTree across more than one rail group (32 nodes: switch_ports'
default) went from 90 GB/s on 512 H100s and 46 on 1024 (and 46 on the 1984 H200s of #283,
measured ~350) to 304, 218 and 218 GB/s at 512 MiB (one switch for all NICs would give
297 on 1024 H100s, a fat tree 255: the rest is where the double binary tree's edges still
meet on a spine under static d-mod-k routes; InfiniBand's adaptive routing, which meshsim
does not model, spreads them); every other figure above is unchanged,
as are the Korthikanti step times (mean 1.77 %, max 5.47 %, before and after).

### Where the misfits come from: fixed cost or bandwidth

The two last columns of the table above split each curve of three sizes or more, measured
and simulated, into a fixed cost and an asymptotic bus bandwidth (time = fixed + size /
bandwidth, least squares over the upper half of its sizes; printed under each curve too).
Where the asymptotes agree (A100 one node 234 / 231 GB/s, two A100 nodes 188 / 188, two
H100 nodes 471 / 461) the misfit at mid sizes is a fixed cost larger than NCCL's latency
model; on GB200 racks the fixed costs of one and two racks are NCCL's, and the asymptotes
are below the curves (one rack 859 / 738, two 835 / 738; twenty racks: 431 measured,
NCCL's tree cap 384, though meshsim's fit from 4 GiB mixes its tree at 4 GiB with its
ring from 8 GiB):

- **One A100 node: 124-164 us measured, 56 us in NCCL's model** (8.4 + 14 x 3.4 us, Simple
  ring). What the run takes beyond size / 234 GB/s and those 56 us is not constant (note
  run): about 12 us at 8 MiB, 70 at 32 MiB, 124 at 128 MiB and 170-200 us from 512 MiB,
  where a ring channel's chunk reaches
  its maximum (NCCL's calcCollChunking: 4 steps of 512 KiB = 2 MiB, one loop = 24 channels
  x 8 ranks x 2 MiB = 384 MiB). One chunk step of a channel (2 MiB at 230 / 24 GB/s = 218
  us) is the order of the saturated excess; below one loop the chunk shrinks with the size
  (S / 192) and the excess is 2 to 4 such steps. NCCL's kernel has no such cost in a
  lock-step ring (each step's slice arrives before the next step needs it, and the link
  idles only during the loop's final receive, 1 of 2n - 1 steps, a bandwidth factor the
  topology's calibrated link efficiency already holds), so it is not modelled: a constant
  of 100+ us would make 8-16 MiB 25 % slow.
- **GB200 racks (NVLS off): 487 us on one rack, 1.18 ms on two, ~4.6 ms on twenty**,
  against 491 and 1403 us in meshsim on one and two racks and 688 us of NCCL's tree
  latency on twenty. One rack is NCCL's ring latency (142 steps of 3.4 us); two racks'
  1.4 ms is NCCL's ring across nodes (284 NVLink steps of 3.4 us, 2 network steps, x 1.4
  NCCL's "plateau"), which meshsim runs from 4 GiB. On twenty racks NCCL's model picks
  its tree to 4 GiB (2 x (71 x 4.0 + 4 x 14) + 8.4 = 688 us against the ring's 14.3 ms
  over 2878 steps) and its ring from 8 GiB; the measured curve is one straight line from
  512 MiB to 16 GiB (its slope between each pair of sizes 398-438 GB/s busbw, time = 4.6 ms
  + size / ~430), so one algorithm ran throughout, with a fixed cost 3.9 times two racks'
  while NCCL's tree depth (connect.cc: 71 + log2 k) grows from 72 to 75 hops. No NCCL
  constant is near it: a store-and-forward fill of the tree's 512 KiB Simple chunks
  (calcCollChunking: one step; 2 x 75 hops at a channel's share of NVLink, 3.4 ms) would
  be nearly as large on two racks, whose 512 MiB (2.16 ms in all, 1.6 ms of it at the
  tree's bandwidth) leaves it under 0.6 ms. CoreWeave published no NCCL log. Two more
  leads were checked in NCCL's source and left unmodelled: the tree's Simple chunk does
  not shrink with the size (enqueue.cc, calcCollChunking shrinks chunks for tree/LL128,
  NVLS, NVLSTree, CollNet and PAT only), so a fill of 2 x 75 hops is a size-independent
  cost, the shape of this curve, but its size depends on the share of a link a chunk
  gets while the pipeline fills (a whole NVLink: 0.7 us per 512 KiB hop, 0.1 ms; one of
  64 channel-directions: 45 us, 6.8 ms), which the source does not fix; and NCCL's PAT
  (2.23 on) serves all-gather and reduce-scatter only (calcCollChunking's PatUp /
  PatDown patterns; all-reduce has none), so it does not bear on these all-reduce
  curves.
- **The GB200 asymptote halves beyond two racks: 835 GB/s on two, 431 on twenty**. Not
  the NICs: a double binary tree's NIC bytes double beyond two nodes (2 N B on two racks,
  N B on more, for N NICs of B GB/s carrying it), but NCCL's search puts its 16 channels
  on 16 of a rack's 72 NICs (4 x ConnectX-7 per tray, one per GPU: NVIDIA's GB200 NVL72
  compute tray; MLCommons' GB200 system descriptions list 4 per 4-GPU node), 16 x 47 =
  752 GB/s, above NVLink's bound. NCCL's per-channel tree cap is what halves: 42.8 GB/s
  per search channel on two nodes, 24 beyond (tuning.cc, perChMaxTreeBws, Blackwell, NCCL
  2.28 on; 2.26.2, which CoreWeave ran, still had 82.8 and 72 in its model), 16 x 24 =
  384 GB/s, which meshsim now reaches at 4 GiB (372). The measured 431 is 16 x 26.9 (15 x
  28.7 with 2.26.2's 15 search channels: 18 x 40.0 GB/s of NVLink at 48 GB/s, topo.h and
  search.cc of that version); NCCL's maintainers say a tree needs more SMs (channels)
  than NCCL gives it to reach the NVLSTree's bandwidth (nccl #1649, nccl-tests #196).
- **1024 H100s, ring/LL128 forced: 2.2 ms fixed, 377 GB/s** against meshsim's 4.4 ms and 346
  GB/s from 4 GiB up, but 1 and 2 GiB take 19.4 and 20.2 ms; the curve is one loop at every
  size (a channel's LL128 step holds
  576,000 bytes, more than the 32-512 KiB per rank and channel here), and its time per
  ring step (time / 2046) is 9.5, 9.9, 12.4, 23 and 46 us from 1 to 16 GiB: a floor of
  ~9.5 us per step below 4 GiB, then the per-channel bandwidth (~11.5 GB/s). That is a
  max(latency, transfer) per step rather than NCCL's latency + transfer, with a per-step
  latency 4x NCCL's LL128 figure (~2.2 us average); RoCE over 128 nodes is the likely
  reason, and one run is not enough to model it.

Structural effects that could be sourced from NCCL were checked against these curves and
left as they are, since meshsim already follows them: the channels a size uses
(enqueue.cc topoGetAlgoInfo: fewer while bytes < channels x threads x threshold), the
chunk sizes (calcCollChunking), the
duplication of search channels (connect.cc: 24 on one node, 16 on two 8-NIC nodes, 32 on
NVL72 racks, whose NVLink bounds the search to 16), the
LL128 enable rules (tuning.cc: on for NVLink and PXB NICs) and NCCL 2.30's SM100 NVLSTree
tuning (transport/nvls.cc: 24 channels and 128 KiB chunks beyond two nodes; meshsim
follows 2.26.2's 32 channels, 128 KiB chunks on two racks and 64 KiB from four, which the
GB200 curves, run with NVLS off, do not use).

OCI's BM.GPU4.8 has two 100 Gb/s NICs per A100 (16 per node, NCCL_IB_HCA of the
oci-hpc-oke BM.GPU4.8 nccl-test manifest), which `inter_node.nics_per_node: 16` with 8
GPUs per node now describes (each GPU owns two NICs, docs/yaml.md): NCCL's search lists
every NIC local to each GPU and gives a GPU's channels its NICs in turn (search.cc,
ncclTopoSelectNets and ncclTopoSearchRecNet; topo.cc, ncclTopoGetLocalNet), so 16 search
channels at the 12 GB/s speed step (240 GB/s of NVLink as NCCL counts A100's holds 20)
where DGX A100's 8 x 200 Gb/s give 8; that doubles the per-channel tree cap (16 x 23.6
GB/s), NCCL's model picks the tree, and two nodes run it above the ring's NIC bound.
meshsim's rings and trees cross nodes on all 16 NICs (one per search channel), and the
1-4 GiB sizes went from -16 to -21 % (the DGX A100 file's 8 NICs held the tree to 8 x
23.6 GB/s: the ring ran) to +5 to +12 % (NCCL's model: tree 0.92 x 16 x 15 GB/s = 220.8
GB/s busbw against the ring's 16 x 12 = 192; the measured 220-236). Below 1 GiB the tree
is now also chosen and runs faster than the measured curve (above).

No public all_gather or reduce_scatter curve for these machines was found, nor any full
curve (64 KiB to 4 GiB) at 128 GPUs or more: the NVIDIA/nccl and nccl-tests issues, vendor
guides and the public code index hold 1- and 2-node runs, 4- and 8-node H100 runs with
NVLSTree (nccl-tests #309), GB200 racks from 512 MiB (CoreWeave), and the 1024-GPU run
above.
"""

def run_meshsim(meshsim, curve):
    lo, hi = min(curve["measured"]), max(curve["measured"])
    cmd = [meshsim, "bench-collective", "--op", "all_reduce", "--min-bytes", str(lo),
           "--max-bytes", str(hi)] + curve["args"]
    out = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        cells = line.split()
        if len(cells) == 7 and cells[0].isdigit():
            model_us = float(cells[6]) if cells[6] != "-" else None
            rows[int(cells[0])] = (float(cells[3]), float(cells[1]), cells[5], model_us)
    return " ".join(["meshsim", "bench-collective", "--op", "all_reduce"] + curve["args"]), rows


def human(n):
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if n >= size:
            return f"{n // size} {unit}"
    return f"{n} B"


def fixed_and_slope(points):
    """Least-squares line time_us = fixed + bytes / rate through (bytes, time_us) points:
    (fixed us, rate in bytes/us)."""
    n = len(points)
    sx = sum(x for x, _ in points)
    sy = sum(y for _, y in points)
    sxx = sum(x * x for x, _ in points)
    sxy = sum(x * y for x, y in points)
    slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    return (sy - slope * sx) / n, 1 / slope


def decomposition(curve, sim):
    """Measured and meshsim time as fixed cost + bytes / asymptotic bandwidth, fitted over the
    upper half of the curve's sizes (at least 2; curves of 3 sizes or more): ((fixed us,
    busbw GB/s) measured, (fixed us, busbw GB/s) meshsim, first size), or None."""
    xs = sorted(curve["measured"])
    if len(xs) < 3:
        return None
    upper = xs[len(xs) // 2:]
    factor = 2 * (curve["scale"] - 1) / curve["scale"]  # all_reduce: busbw / algbw
    measured = [(x, x / (curve["measured"][x] / factor * 1e3)) for x in upper]
    simulated = [(x, sim[x][1]) for x in upper]
    out = []
    for points in (measured, simulated):
        fixed, rate = fixed_and_slope(points)
        out.append((fixed, rate * 1e-3 * factor))
    return out[0], out[1], upper[0]


def curve_section(curve, command, sim):
    lines = [f"### {curve['title']}", "",
             f"- Source: {curve['source']}.", f"- Hardware: {curve['hardware']}.",
             f"- NCCL: {curve['nccl']}.", f"- meshsim: `{command}`.", "",
             "| size | measured busbw GB/s | meshsim busbw GB/s | meshsim time us | "
             "meshsim algorithm/protocol/channels | error | NCCL's model of that choice, "
             "busbw GB/s |", "|---|---|---|---|---|---|---|"]
    inside, bad, errors, outside = 0, 0, [], []
    factor = 2 * (curve["scale"] - 1) / curve["scale"]  # all_reduce: busbw / algbw
    for size in sorted(curve["measured"]):
        measured = curve["measured"][size]
        busbw, time_us, how, model_us = sim[size]
        model = f"{size / model_us / 1e3 * factor:.2f}" if model_us else "-"
        error = busbw / measured - 1
        in_range = LO <= size <= HI
        mark = ""
        if in_range:
            inside += 1
            errors.append(abs(error))
            if abs(error) > TOLERANCE:
                bad += 1
                mark = " **(> 15 %)**"
        else:
            outside.append(abs(error))
            mark = " (outside 64 KiB-4 GiB)"
        lines.append(f"| {human(size)} | {measured:.2f} | {busbw:.2f} | {time_us:.2f} | {how} | "
                     f"{error:+.1%}{mark} | {model} |")
    if not errors:  # every size beyond 4 GiB: their errors, for the record
        errors = outside
        summary = (f"No size in 64 KiB-4 GiB; beyond it mean absolute error "
                   f"{sum(errors) / len(errors):.1%}, max {max(errors):.1%}.")
    else:
        summary = (f"{inside - bad} of {inside} sizes in 64 KiB-4 GiB within 15 %; mean "
                   f"absolute error {sum(errors) / len(errors):.1%}, max {max(errors):.1%}.")
    lines += ["", summary, ""]
    split = decomposition(curve, sim)
    if split:
        (mf, mb), (sf, sb), first = split
        lines += [f"From {human(first)} up, time = fixed cost + size / asymptotic bandwidth "
                  f"(least squares): measured {mf:.0f} us and {mb:.0f} GB/s busbw, meshsim "
                  f"{sf:.0f} us and {sb:.0f} GB/s.", ""]
    lines += version_model_lines(curve)
    return lines, (inside, bad, sum(errors) / len(errors), max(errors), split)


def version_model_lines(curve):
    """What the curve's own NCCL version's tuner model picks per size and estimates
    (scripts/nccl_model_versions.py), beside the measurement; [] for other curves."""
    key = curve.get("version_model")
    if not key:
        return []
    graph = nccl_model_versions.GRAPHS[key]
    factor = 2 * (curve["scale"] - 1) / curve["scale"]
    lines = [f"NCCL {graph['version']}'s own tuner model (`scripts/nccl_model_versions.py`: its "
             f"constants at tag {nccl_model_versions.VERSIONS[graph['version']]['tag']}, its "
             "topology search's channels and speeds derived there), as a check on the choice:",
             "", "| size | NCCL's pick | its estimate us | its estimate busbw GB/s | "
             "vs measured |", "|---|---|---|---|---|"]
    within = 0
    for size in sorted(curve["measured"]):
        algorithm, protocol, time_us = nccl_model_versions.choose(key, size)
        busbw = size / time_us / 1e3 * factor
        error = busbw / curve["measured"][size] - 1
        within += abs(error) <= TOLERANCE
        lines.append(f"| {human(size)} | {algorithm}/{protocol} | {time_us:.1f} | {busbw:.2f} | "
                     f"{error:+.1%} |")
    lines += ["", f"NCCL's own estimate is within 15 % at {within} of {len(curve['measured'])} "
              "sizes.", ""]
    return lines


def plot(curves, sims, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = [("8 GPUs", lambda n: n == 8), ("16 and 32 GPUs", lambda n: n in (16, 32)),
              ("72 GPUs (one NVL72 rack)", lambda n: n == 72),
              (">= 128 GPUs", lambda n: n >= 128)]
    fig, axes = plt.subplots(2, len(panels), figsize=(22, 9), sharex="col",
                             gridspec_kw={"height_ratios": [3, 2]})
    for col, (label, member) in enumerate(panels):
        top, bottom = axes[0][col], axes[1][col]
        for i, curve in enumerate(c for c in curves if member(c["scale"])):
            color, xs = f"C{i}", sorted(curve["measured"])
            sim = sims[curve["name"]]
            style = "-" if curve["check"] else ":"
            top.plot(xs, [curve["measured"][x] for x in xs], "o", color=color,
                     label=f"{curve['name']}: measured")
            top.plot(xs, [sim[x][0] for x in xs], style + ("x" if len(xs) == 1 else ""),
                     color=color, label=f"{curve['name']}: meshsim")
            bottom.plot(xs, [100 * (sim[x][0] / curve["measured"][x] - 1) for x in xs],
                        "o" + style, color=color, label=curve["name"])
        for ax in (top, bottom):
            ax.set_xscale("log", base=2)
            ax.axvspan(LO, HI, color="0.94", zorder=0)
            ax.grid(True, which="both", alpha=0.3)
        top.set_yscale("log")
        top.set_title(f"all_reduce bus bandwidth, {label}")
        top.set_ylabel("busbw (GB/s)")
        top.legend(fontsize=7)
        bottom.axhspan(-100 * TOLERANCE, 100 * TOLERANCE, color="0.85", zorder=0)
        bottom.axhline(0, color="black", linewidth=0.8)
        bottom.set_ylabel("meshsim / measured - 1 (%)")
        bottom.set_xlabel("size (bytes); shaded: 64 KiB-4 GiB, +-15 %")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--meshsim", default=os.path.join(ROOT, "build", "meshsim"))
    parser.add_argument("--out", default=os.path.join(ROOT, "results", "nccl.md"))
    args = parser.parse_args()
    sims, sections, totals = {}, [], []
    for curve in CURVES:
        command, sim = run_meshsim(os.path.abspath(args.meshsim), curve)
        sims[curve["name"]] = sim
        lines, total = curve_section(curve, command, sim)
        sections += lines
        totals.append((curve, total))
    png = os.path.splitext(args.out)[0] + ".png"
    plot(CURVES, sims, png)
    with open(args.out, "w") as f:
        f.write(render(totals, sections, os.path.basename(png)))
    print(f"wrote {args.out} and {png}")


def render(totals, sections, png):
    head = INTRO
    table = ["| curve | GPUs | in the acceptance | sizes within 15 % (64 KiB-4 GiB) | mean "
             "abs. error | max abs. error | fixed cost us, measured / meshsim | asymptotic "
             "busbw GB/s, measured / meshsim |", "|---|---|---|---|---|---|---|---|"]
    for curve, (inside, bad, mean, worst, split) in totals:
        within = f"{inside - bad} of {inside}" if inside else "none (sizes > 4 GiB)"
        fixed = slope = "-"
        if split:
            (mf, mb), (sf, sb), _ = split
            fixed, slope = f"{mf:.0f} / {sf:.0f}", f"{mb:.0f} / {sb:.0f}"
        table.append(f"| {curve['name']} | {curve['scale']} | {'yes' if curve['check'] else 'no'}"
                     f" | {within} | {mean:.1%} | {worst:.1%} | {fixed} | {slope} |")
    return (head.replace("{PNG}", png).replace("{SUMMARY}", "\n".join(table)) + "\n" +
            "\n".join(sections))


if __name__ == "__main__":
    sys.exit(main())
