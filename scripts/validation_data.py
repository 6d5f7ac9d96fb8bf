"""The data sets of shared/validation that meshsim can express, one per GPU kind and precision,
and what scripts/calibrate.py fits on each (used by calibrate.py and validate.py).

A data set: its rows (a bundled experiment and the published step time, with the source row
it comes from), the topology whose efficiencies are fitted on it, and the default grid of the
fit per kernel model. Every published value is copied or derived from
shared/validation/public_runs.md (section named in `source`) or shared/validation/README.md;
a user's clone has the same numbers in the experiments' header comments.
"""
import collections
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A row: a bundled experiment, its published step time and the table row it comes from. Every
# row of a fitted data set is fitted (until 2026-12-04 the rows of hundreds of GPUs with expert
# parallelism were kept out, because their simulation once took minutes).
Row = collections.namedtuple("Row", "experiment published_s note")
# grids: {kernel model: {"matmul": "a,b,...", "kernel_overhead_us": "x,y,..."}}, the default
# grid of the fit; empty: the data set is not fitted (its rows are predicted with the
# topology's committed values). matmul_key: the efficiency the "matmul" axis sets
# (`matmul`, or `matmul_fp8` for FP8 data sets, whose GEMMs run at the fp8 peak).
Dataset = collections.namedtuple(
    "Dataset",
    "key title gpu precision topology source rows grids json derivation notes matmul_key",
    defaults=("", "matmul"))

# Megatron-LM's FLOPs per step for a GPT model with FFN 4h and multi-head attention
# (Narayanan et al. 2021; Megatron-LM's num_floating_point_operations): the table's
# per-GPU TFLOP/s are these FLOPs over the step time and the GPU count.
SEQ, VOCAB = 4096, 131072


def megatron_step_s(batch, layers, hidden, gpus, tflops_per_gpu, seq=SEQ, vocab=VOCAB):
    flops = 72 * batch * seq * layers * hidden ** 2 * (
        1 + seq / (6 * hidden) + vocab / (12 * layers * hidden))
    return flops / (tflops_per_gpu * 1e12 * gpus)


# public_runs.md section 5 (Megatron-LM README @ d98e8a64, images/model_table.png):
# size, hidden, layers, GPUs, batch, per-GPU TFLOP/s.
_WEAK_SCALING = [
    ("1.7b", 2048, 24, 48, 192, 408.8), ("7.1b", 4096, 30, 96, 192, 465.9),
    ("16b", 6144, 32, 192, 192, 489.1), ("32b", 7168, 48, 384, 192, 459.6),
    ("70b", 8192, 84, 768, 384, 419.7), ("119b", 10240, 92, 1536, 768, 420.5),
    ("177b", 12288, 96, 2304, 1152, 432.8), ("314b", 16384, 96, 3072, 1536, 474.4),
    ("462b", 18432, 112, 6144, 3072, 459.9),
]

KORTHIKANTI = Dataset(
    key="a100-korthikanti",
    title="A100, fp16: Korthikanti et al. 2022 (Selene)",
    gpu="A100-SXM4-80GB", precision="fp16",
    topology="topologies/selene-a100.yaml",
    source="shared/validation/README.md (Korthikanti et al. 2022, arXiv 2205.05198, Table 3)",
    rows=[Row(f"{stem}-{variant}", s, f"{stem} {variant}")
          for stem, full, sel in [("korthikanti-22b", 1.42, 1.10), ("gpt3-175b", 18.13, 13.75),
                                  ("korthikanti-530b", 49.05, 37.83),
                                  ("korthikanti-1t", 94.42, 71.49)]
          for variant, s in (("full", full), ("selective", sel))],
    # Shapes: the mean error falls along a ridge where a higher matmul efficiency is offset
    # by a longer kernel overhead, lowest near 0.80 with 0-10 us. Roofline: the same ridge,
    # lowest near 0.77 / 50 us (the overhead then also stands for the small-k and wave
    # losses the roofline does not model).
    grids={"shapes": {"matmul": "0.77,0.78,0.79,0.80,0.81,0.82,0.83",
                      "kernel_overhead_us": "0,5,10,15,20,25,30"},
           "roofline": {"matmul": "0.74,0.75,0.76,0.77,0.78,0.79,0.80",
                        "kernel_overhead_us": "30,40,50,60,70"}},
    json="results/calibration.json",
    derivation="step times as published (Table 3)")

H100_MEGATRON = Dataset(
    key="h100-megatron",
    title="H100, bf16: Megatron-LM weak scaling (Megatron-Core r0.8.0)",
    gpu="H100-SXM5-80GB", precision="bf16",
    topology="topologies/dgx-h100.yaml",
    source="shared/validation/public_runs.md section 5 (NVIDIA/Megatron-LM README @ d98e8a64, "
           "images/model_table.png)",
    rows=[Row(f"public-h100-megatron-{size}",
              megatron_step_s(batch, layers, hidden, gpus, tflops),
              f"{size.upper()}: {gpus} GPUs, {tflops} TFLOP/s per GPU")
          for size, hidden, layers, gpus, batch, tflops in _WEAK_SCALING],
    # The grid spans 0.54-0.80 of the 989 TFLOP/s peak (large bf16 GEMMs reach ~0.71-0.76
    # on an H100 SXM in isolation, less under a training run's power and clock limits); with
    # the pipelined rows interleaved (their headers) the optimum lies inside it. The kernel
    # overhead is held at 5 us, the optimum of an earlier 0/5/10 us grid. Steps of 0.01
    # around the optimum: a step of 0.02 moves these rows 3-4 %.
    grids={"shapes": {"matmul": "0.54,0.56,0.57,0.58,0.59,0.60,0.62,0.64,0.66,0.68,0.70,0.74,0.80",
                      "kernel_overhead_us": "5"}},
    json="results/calibration-h100-megatron.json",
    derivation="step time = 72*B*s*l*h^2*(1 + s/(6h) + V/(12*l*h)) / (per-GPU TFLOP/s x GPUs), "
               "Megatron-LM's FLOP count, as the table defines its TFLOP/s",
    notes="Assumed where the source is silent (each experiment's header): micro batch 2 "
          "(1 on the 462B row, where 2 needs 91.3 GiB of 80; fitted, below), "
          "sequence parallelism, no recomputation with flash attention, ZeRO-1 (the "
          "distributed optimizer), bf16 gradient reduction in Megatron-Core's default bucket "
          "(max(40M, 1M x dp) parameters), on the pipelined rows the interleaved schedule with one "
          "layer per virtual stage (the source names PP overlap, which Megatron-LM runs only "
          "interleaved), FFN 4h with GeLU, multi-head "
          "attention, untied embeddings, Megatron-LM's unfused cross entropy (--cross-entropy-loss-fusion is "
          "opt-in); --tp-comm-overlap with TP (plan.tp_comm_overlap) and "
          "--overlap-param-gather (plan.framework_options.overlap_param_gather, one bucket "
          "ahead of the forward), as the runs used. TE runs the chunk GEMMs of its TP overlap "
          "on up to 3 streams at once (README \"Kernel model\", concurrent chunks). The micro "
          "batch is fitted with the matmul efficiency (scripts/calibrate.py --set "
          "plan.micro_batch=M; leave-one-out over both, 2026-12-03): micro batch 1 on every "
          "row fits at best 5.96 %, max 20.71 % (the 32B row: with four micro-batches per step "
          "its parameter all-gather and gradient reduce-scatter, 8 GB each per GPU over its "
          "one NIC, outlast the first micro-batch's forward and the last one's backward, 0.16 s "
          "exposed), 2 at 4.34 %, max 8.39 % (leave-one-out below; refitted in each fold as "
          "well, the micro batch stays 2 in every fold), 4 on every row at 4.21 %, max "
          "10.98 % (four rows do not fit at 4) (README \"Calibration and validation\").")


def tokens_step_s(gbs, seq, tokens_per_gpu_s, gpus):
    """public_runs.md section 1: step time = GBS x SeqLen / (tokens/s/GPU x GPUs)."""
    return gbs * seq / (tokens_per_gpu_s * gpus)


# The rows of hundreds of GPUs (expert parallelism, or Llama 3.1 405B on 1,024 H100s) whose
# simulation took minutes before expert-parallel plans replayed one pipeline (2026-12-01):
# scripts/expert_symmetry_check.sh times their full and symmetric replays. Now fitted like
# every other row (0.1-2.3 s each on two cores, H100 Qwen3 235B 20 s; measured 2026-12-04).
LARGE_RUNS = {"public-h100-bridge-llama3-405b", "public-b200-bridge-deepseek-v3",
         "public-b300-bridge-deepseek-v3", "public-b300-bridge-qwen3-235b-a22b",
         "public-gb300-bridge-deepseek-v3", "public-gb300-bridge-deepseek-v3-bf16",
         "public-gb300-bridge-qwen3-235b-a22b",
         "public-b200-bridge-qwen3-235b-a22b", "public-gb200-bridge-deepseek-v3",
         "public-gb200-bridge-qwen3-235b-a22b", "public-gb200-bridge-deepseek-v3-bf16",
         "public-gb200-bridge-qwen3-235b-a22b-bf16", "public-h100-automodel-deepseek-v3-1024",
         "public-h100-automodel-deepseek-v3-256", "public-h100-bridge-qwen3-235b-a22b"}


def _token_rows(table):
    """Rows of (stem after 'public-', GBS, SeqLen, tokens/s/GPU, GPUs, source row)."""
    return [Row(f"public-{stem}", tokens_step_s(gbs, seq, tok, gpus), note)
            for stem, gbs, seq, tok, gpus, note in table]


_TOKENS_DERIVATION = ("step time = GBS x SeqLen / (tokens/s/GPU x GPUs), as public_runs.md "
                      "section 1 derives it")
_BRIDGE = ("shared/validation/public_runs.md section {} (NVIDIA-NeMo/Megatron-Bridge "
           "docs/performance-summary.md and -archive.md @ 067f987d)")
_BRIDGE_RULE = (
    "Rows: every pre-training row of the table for this system and precision whose model "
    "meshsim can write down, one per (model, GPUs, precision): the newest container's "
    "(older containers' rows of the same run measure older software: e.g. H100 Qwen3 30B-A3B "
    "ran at 5,113 tokens/s/GPU in 26.02 and 9,058 in 26.02.01 with the same settings); "
    "25.09 rows are skipped (precision not stated, section 8), and so are SFT and LoRA rows. "
    "FP8 without a suffix is taken as Transformer Engine's current scaling (FP8-CS, as 25.11 "
    "names it). Each experiment's header lists what the source leaves unstated.")

# public_runs.md section 2a (NeMo 24.07, DGX-H100, FP8) and section 1a (Megatron-Bridge,
# DGX-H100, FP8 rows): (stem, GBS, SeqLen, tokens/s/GPU, GPUs, source row).
_H100_FP8 = [
    ("h100-nemo-gpt3-5b", 2048, 2048, 23406, 64, "NeMo 24.07 GPT3-5B: 64 GPUs, TP 1, MBS 4"),
    ("h100-nemo-gpt3-20b", 256, 2048, 5851, 64, "NeMo 24.07 GPT3-20B: 64 GPUs, TP 2, MBS 2"),
    ("h100-nemo-gpt3-175b-128", 256, 2048, 716, 128,
     "NeMo 24.07 GPT3-175B: 128 GPUs, TP 4, PP 8, VP 6"),
    ("h100-nemo-gpt3-175b-512", 2048, 2048, 825, 512,
     "NeMo 24.07 GPT3-175B: 512 GPUs, TP 4, PP 8, VP 6, MBS 2"),
    ("h100-nemo-llama2-7b", 128, 4096, 16934, 8, "NeMo 24.07 LLAMA2-7B: 8 GPUs"),
    ("h100-nemo-llama2-13b", 128, 4096, 8715, 16, "NeMo 24.07 LLAMA2-13B: 16 GPUs, PP 4, VP 10"),
    ("h100-nemo-llama2-70b", 128, 4096, 1728, 64,
     "NeMo 24.07 LLAMA2-70B: 64 GPUs, TP 4, PP 4, VP 20"),
    ("h100-nemo-nemotron-8b", 256, 4096, 12507, 64, "NeMo 24.07 Nemotron-8B: 64 GPUs, TP 2, MBS 4"),
    ("h100-nemo-nemotron-22b", 256, 4096, 4312, 64,
     "NeMo 24.07 Nemotron-22B: 64 GPUs, TP 2, PP 4, VP 10, MBS 2"),
    ("h100-nemo-nemotron-340b", 32, 4096, 326, 128,
     "NeMo 24.07 Nemotron-340B: 128 GPUs, TP 8, PP 8, VP 12"),
    ("h100-nemo-llama3-8b", 128, 8192, 12273, 8, "NeMo 24.07 LLAMA3-8B: 8 GPUs, CP 2"),
    ("h100-nemo-llama3-70b", 128, 8192, 1524, 64,
     "NeMo 24.07 LLAMA3-70B: 64 GPUs, TP 4, PP 4, CP 2, VP 5"),
    ("h100-bridge-llama3-405b", 1536, 8192, 326, 1024,
     "Bridge 26.06 LLAMA3.1_405B: 1024 GPUs, TP 8, PP 8, CP 2, VP 8"),
    ("h100-bridge-llama3-70b", 256, 8192, 1664, 64,
     "Bridge 26.04.01 LLAMA3_70B: 64 GPUs, TP 4, PP 8, VP 5"),
    ("h100-bridge-llama3-8b", 128, 8192, 14451, 8, "Bridge 25.11 LLAMA3_8B FP8-CS: 8 GPUs, FSDP 8"),
    ("h100-bridge-qwen3-30b-a3b", 1024, 4096, 8826, 16,
     "Bridge 26.06 Qwen3_30B_a3B: 16 GPUs, EP 16"),
    ("h100-bridge-qwen3-235b-a22b", 8192, 4096, 1712, 256,
     "Bridge 26.04.01 Qwen3_235B_a22B: 256 GPUs, TP 2, PP 8, VP 4, EP 32 (EP folded over TP)"),
]

# public_runs.md section 1b, DGX-B200 (FP8 and MXFP8 rows; 25.11's values in parentheses are
# the MXFP8 ones).
_B200_FP8 = [
    ("b200-bridge-deepseek-v3", 4096, 4096, 3328, 256,
     "26.04.01 DeepSeekV3 MXFP8: 256 GPUs, PP 8, VP 2, EP 32"),
    ("b200-bridge-qwen3-30b-a3b", 512, 4096, 27136, 8,
     "26.04.01 Qwen3_30B_a3B MXFP8: 8 GPUs, EP 8, MBS 4"),
    ("b200-bridge-qwen3-235b-a22b", 8192, 4096, 3776, 256,
     "26.04.01 Qwen3_235B_a22B MXFP8: 256 GPUs, PP 8, EP 8"),
    ("b200-bridge-llama3-8b-cs", 128, 8192, 30624, 8, "25.11 LLAMA3_8B FP8-CS: 8 GPUs, MBS 2"),
    ("b200-bridge-llama3-8b-mx", 128, 8192, 29521, 8, "25.11 LLAMA3_8B FP8-MX: 8 GPUs, MBS 2"),
    ("b200-bridge-llama3-405b-cs", 64, 8192, 661, 128,
     "25.11 LLAMA3.1_405B FP8-CS: 128 GPUs, TP 4, PP 8, CP 2, VP 8"),
    ("b200-bridge-llama3-405b-mx", 64, 8192, 624, 128,
     "25.11 LLAMA3.1_405B FP8-MX: 128 GPUs, TP 4, PP 8, CP 2, VP 8"),
]
_B200_BF16 = [
    ("b200-bridge-gpt-oss-120b", 1280, 4096, 13568, 64,
     "26.04.01 GPT OSS 120B BF16: 64 GPUs, EP 8, MBS 4"),
]
# public_runs.md section 1b, DGX-GB200.
_GB200_FP8 = [
    ("gb200-bridge-deepseek-v3", 4096, 4096, 4912, 256,
     "26.08 DeepSeekV3 MXFP8: 256 GPUs, PP 4, VP 4, EP 64"),
    ("gb200-bridge-gpt-oss-120b", 1280, 4096, 28672, 64,
     "26.08 GPT OSS 120B MXFP8: 64 GPUs, EP 64, MBS 4"),
    ("gb200-bridge-qwen3-30b-a3b", 512, 4096, 39936, 8,
     "26.08 Qwen3_30B_a3B MXFP8: 8 GPUs, EP 8, MBS 4"),
    ("gb200-bridge-qwen3-235b-a22b", 8192, 4096, 7280, 256,
     "26.08 Qwen3_235B_a22B MXFP8: 256 GPUs, PP 8, VP 3, EP 32"),
    ("gb200-bridge-llama3-405b-fp8", 1536, 8192, 843, 256,
     "26.06 LLAMA3.1_405B FP8: 256 GPUs, TP 4, PP 16, VP 4"),
    ("gb200-bridge-llama3-405b-mx", 1536, 8192, 783, 256,
     "26.06 LLAMA3.1_405B MXFP8: 256 GPUs, TP 4, PP 16, VP 8"),
    ("gb200-bridge-llama3-70b-fp8", 256, 8192, 4224, 64,
     "26.04.01 LLAMA3_70B FP8: 64 GPUs, FSDP 64, MBS 2"),
    ("gb200-bridge-llama3-70b-mx", 256, 8192, 3712, 64,
     "26.04.01 LLAMA3_70B MXFP8: 64 GPUs, TP 2, PP 4, VP 5"),
    ("gb200-bridge-llama3-8b-cs", 128, 8192, 31508, 8, "25.11 LLAMA3_8B FP8-CS: 8 GPUs, MBS 2"),
    ("gb200-bridge-llama3-8b-mx", 128, 8192, 29789, 8, "25.11 LLAMA3_8B FP8-MX: 8 GPUs, MBS 2"),
]
_GB200_BF16 = [
    ("gb200-bridge-deepseek-v3-bf16", 4096, 4096, 3139, 256,
     "25.11 DeepSeekV3 (w/o MTP) BF16: 256 GPUs, PP 4, VP 4, EP 64"),
    ("gb200-bridge-gpt-oss-120b-bf16", 1280, 4096, 16640, 64,
     "26.04.01 GPT OSS 120B BF16: 64 GPUs, EP 64, MBS 4"),
    ("gb200-bridge-qwen3-235b-a22b-bf16", 8192, 4096, 4916, 256,
     "25.11 Qwen3_235B_a22B BF16: 256 GPUs, PP 8, VP 3, EP 32"),
]
# public_runs.md section 6a (NeMo-Automodel, DGX-H100, BF16, FSDP2): the step times as
# published; (stem, published step s, source row).
_AUTOMODEL = [
    ("h100-automodel-deepseek-v3-1024", 37.87,
     "DeepSeek V3 671B: 1024 GPUs, PP 4, VP 8, EP 64, FSDP 256"),
    ("h100-automodel-deepseek-v3-256", 8.18,
     "DeepSeek V3 671B: 256 GPUs, PP 4, VP 8, EP 64, FSDP 64"),
    ("h100-automodel-qwen3-30b-a3b", 21.773, "Qwen3 MoE 30B: 8 GPUs, EP 8, FSDP 8, MBS 4"),
    ("h100-automodel-gpt-oss-20b", 10.04, "GPT-OSS 20B: 8 GPUs, FSDP 8, MBS 2"),
    ("h100-automodel-gpt-oss-120b", 4.30, "GPT-OSS 120B: 64 GPUs, FSDP 64, MBS 2"),
    ("h100-automodel-llama3-70b", 18.90, "Llama3 70B: 64 GPUs, CP 2, FSDP 32"),
]

H100_FP8 = Dataset(
    key="h100-fp8",
    title="H100, fp8: NeMo 24.07 and Megatron-Bridge",
    gpu="H100-SXM5-80GB", precision="fp8",
    topology="topologies/dgx-h100.yaml",
    source="shared/validation/public_runs.md sections 2a (NVIDIA/NeMo "
           "docs/source/performance/performance_summary.md @ 8e3d65d, NeMo 24.07) and 1a "
           "(Megatron-Bridge)",
    rows=_token_rows(_H100_FP8),
    # Only the FP8 GEMMs' efficiency is fitted: the kernel overhead is the H100's as committed
    # (fitted in bf16 on the Megatron-LM rows, which scripts/validate.sh fits first);
    # attention, element-wise kernels and the BF16 GEMMs keep the BF16 fit.
    grids={"shapes": {"matmul": "0.50,0.52,0.54,0.55,0.56,0.57,0.58,0.60,0.65,0.70,0.80",
                      "kernel_overhead_us": "committed"}},
    json="results/calibration-h100-fp8.json",
    derivation=_TOKENS_DERIVATION,
    matmul_key="matmul_fp8",
    notes="NeMo 24.07 rows: Transformer Engine's delayed scaling (TE's default recipe then); "
          "Megatron-Bridge rows: current scaling. " + _BRIDGE_RULE)

B200_FP8 = Dataset(
    key="b200-fp8",
    title="B200, fp8 / mxfp8: Megatron-Bridge (DGX-B200)",
    gpu="B200-SXM-180GB", precision="fp8, mxfp8",
    topology="topologies/dgx-b200.yaml",
    source=_BRIDGE.format("1b"),
    rows=_token_rows(_B200_FP8),
    # The FP8 GEMMs' efficiency only; the kernel overhead is the H100's fit (5 us: one
    # parameter, so that 5 rows can fit it).
    grids={"shapes": {"matmul": "0.45,0.47,0.48,0.49,0.50,0.51,0.52,0.53,0.55,0.60,0.70",
                      "kernel_overhead_us": "5"}},
    json="results/calibration-b200-fp8.json",
    derivation=_TOKENS_DERIVATION,
    matmul_key="matmul_fp8",
    notes=_BRIDGE_RULE)

B200_BF16 = Dataset(
    key="b200-bf16",
    title="B200, bf16: Megatron-Bridge (DGX-B200)",
    gpu="B200-SXM-180GB", precision="bf16",
    topology="topologies/dgx-b200.yaml",
    source=_BRIDGE.format("1b"),
    rows=_token_rows(_B200_BF16),
    grids={},
    json="results/calibration-b200-bf16.json",
    derivation=_TOKENS_DERIVATION,
    notes="One row: not fitted (a fit on one row would only memorise it); predicted with "
          "dgx-b200's bf16 matmul estimate and the kernel overhead fitted on its FP8 rows. " +
          _BRIDGE_RULE)

GB200_FP8 = Dataset(
    key="gb200-fp8",
    title="GB200 NVL72, fp8 / mxfp8: Megatron-Bridge (DGX-GB200)",
    gpu="GB200-Blackwell-186GB", precision="fp8, mxfp8",
    topology="topologies/gb200-nvl72.yaml",
    source=_BRIDGE.format("1b"),
    rows=_token_rows(_GB200_FP8),
    # As on B200: the FP8 GEMMs' efficiency only, the H100's kernel overhead.
    grids={"shapes": {"matmul": "0.45,0.47,0.48,0.49,0.50,0.51,0.52,0.53,0.55,0.60,0.70",
                      "kernel_overhead_us": "5"}},
    json="results/calibration-gb200-fp8.json",
    derivation=_TOKENS_DERIVATION,
    matmul_key="matmul_fp8",
    notes="256-GPU rows run on 4 NVLink domains of 64 GPUs (16 trays each). " + _BRIDGE_RULE)

GB200_BF16 = Dataset(
    key="gb200-bf16",
    title="GB200 NVL72, bf16: Megatron-Bridge (DGX-GB200)",
    gpu="GB200-Blackwell-186GB", precision="bf16",
    topology="topologies/gb200-nvl72.yaml",
    source=_BRIDGE.format("1b"),
    rows=_token_rows(_GB200_BF16),
    grids={},
    json="results/calibration-gb200-bf16.json",
    derivation=_TOKENS_DERIVATION,
    notes="Not fitted: three rows, too few to fit and check; predicted with gb200-nvl72's bf16 matmul estimate and the kernel "
          "overhead of its FP8 fit. " + _BRIDGE_RULE)

# public_runs.md section 1b: Megatron-Bridge's Nemotron 3 rows (hybrid Mamba-2 / attention /
# MoE models, workloads/models/nemotron-3-*.yaml), the newest container's per (model, GPUs,
# precision). The DGX-B200 Nano row's experiment predates this data set (its own name).
_HYBRID_NOTES = ("Not fitted: hybrid Mamba-2 / attention / MoE models (README \"Hybrid "
                 "models\"), predicted with the topology's FP8 fit from the dense and MoE "
                 "Transformer rows, so every error here is a held-out error. ")


def _hybrid_dataset(system, gpu, topology, rows):
    """A held-out data set of the Nemotron 3 rows of one system (`system`: b200, gb200)."""
    titles = {"b200": "B200", "gb200": "GB200 NVL72"}
    return Dataset(
        key=f"{system}-hybrid",
        title=f"{titles[system]}, mxfp8: Megatron-Bridge Nemotron 3 (hybrid Mamba-2/MoE), held out",
        gpu=gpu, precision="mxfp8", topology=topology, source=_BRIDGE.format("1b"),
        rows=rows, grids={}, json=f"results/calibration-{system}-hybrid.json",
        derivation=_TOKENS_DERIVATION, matmul_key="matmul_fp8",
        notes=_HYBRID_NOTES + _BRIDGE_RULE)


B200_HYBRID = _hybrid_dataset(
    "b200", "B200-SXM-180GB", "topologies/dgx-b200.yaml",
    [Row("nemotron-3-nano-b200", tokens_step_s(512, 8192, 32768, 8),
         "26.04.01 Nemotron_3_Nano MXFP8: 8 GPUs, EP 8, MBS 2")] + _token_rows([
        ("b200-bridge-nemotron-3-super", 512, 8192, 6400, 64,
         "26.04.01 Nemotron_3_Super MXFP8: 64 GPUs, EP 64")]))
GB200_HYBRID = _hybrid_dataset(
    "gb200", "GB200-Blackwell-186GB", "topologies/gb200-nvl72.yaml", _token_rows([
        ("gb200-bridge-nemotron-3-nano", 512, 8192, 34816, 8,
         "26.06.01 Nemotron_3_Nano MXFP8: 8 GPUs, EP 8, MBS 2"),
        ("gb200-bridge-nemotron-3-super", 512, 8192, 7040, 64,
         "26.08 Nemotron_3_Super MXFP8: 64 GPUs, TP 2, EP 64")]))


# public_runs.md section 1c (bonus rows): DGX-B300 and DGX-GB300, every pre-training row
# whose model meshsim can write down, the newest container's per (model, GPUs, precision);
# NVFP4 rows skipped (no fp4 dtype), and the 25.11 GB300 Qwen3 235B-A22B BF16 row (marked
# CHECK: its GA disagrees with GBS / (MBS x DP)).
_B300 = [
    ("b300-bridge-deepseek-v3", 4096, 4096, 3541, 256,
     "26.06 DeepSeekV3 MXFP8: 256 GPUs, PP 8, EP 8, MBS 2"),
    ("b300-bridge-gpt-oss-120b", 1280, 4096, 18534, 64,
     "26.06 GPT OSS 120B MXFP8: 64 GPUs, EP 8, MBS 4"),
    ("b300-bridge-gpt-oss-120b-bf16", 1280, 4096, 15232, 64,
     "26.04.01 GPT OSS 120B BF16: 64 GPUs, EP 8, MBS 4"),
    ("b300-bridge-qwen3-30b-a3b", 512, 4096, 40769, 8,
     "26.06 Qwen3_30B_a3B MXFP8: 8 GPUs, EP 8, MBS 8"),
    ("b300-bridge-qwen3-235b-a22b", 8192, 4096, 5936, 256,
     "26.04.01 Qwen3_235B_a22B MXFP8: 256 GPUs, PP 8, EP 8, MBS 2"),
    ("b300-bridge-nemotron-3-nano", 512, 8192, 37316, 8,
     "26.06 Nemotron_3_Nano MXFP8: 8 GPUs, EP 8, MBS 4"),
    ("b300-bridge-nemotron-3-super", 512, 8192, 7867, 64,
     "26.06 Nemotron_3_Super MXFP8: 64 GPUs, EP 8"),
]
_GB300_FP8 = [
    ("gb300-bridge-deepseek-v3", 4096, 4096, 6288, 256,
     "26.08 DeepSeekV3 MXFP8: 256 GPUs, PP 2, VP 8, EP 32"),
    ("gb300-bridge-gpt-oss-120b", 1280, 4096, 33024, 64,
     "26.08 GPT OSS 120B MXFP8: 64 GPUs, EP 16, MBS 4"),
    ("gb300-bridge-qwen3-30b-a3b", 512, 4096, 44544, 8,
     "26.08 Qwen3_30B_a3B MXFP8: 8 GPUs, EP 8, MBS 8"),
    ("gb300-bridge-qwen3-235b-a22b", 8192, 4096, 8816, 256,
     "26.08 Qwen3_235B_a22B MXFP8: 256 GPUs, PP 4, VP 12, EP 32, MBS 2"),
    ("gb300-bridge-llama3-405b-fp8", 1536, 8192, 1048, 256,
     "26.06 LLAMA3.1_405B FP8: 256 GPUs, TP 4, PP 8, VP 4"),
    ("gb300-bridge-llama3-405b-mx", 1536, 8192, 952, 256,
     "26.06 LLAMA3.1_405B MXFP8: 256 GPUs, TP 2, PP 8, CP 2, VP 4"),
    ("gb300-bridge-llama3-70b-fp8", 256, 8192, 5248, 64,
     "26.04.01 LLAMA3_70B FP8: 64 GPUs, FSDP 64, MBS 2"),
    ("gb300-bridge-llama3-70b-mx", 256, 8192, 4864, 64,
     "26.04.01 LLAMA3_70B MXFP8: 64 GPUs, PP 4, VP 5"),
    ("gb300-bridge-llama3-8b-cs", 128, 8192, 37556, 8, "25.11 LLAMA3_8B FP8-CS: 8 GPUs, MBS 2"),
    ("gb300-bridge-llama3-8b-mx", 128, 8192, 36108, 8, "25.11 LLAMA3_8B FP8-MX: 8 GPUs, MBS 2"),
]
_GB300_BF16 = [
    ("gb300-bridge-deepseek-v3-bf16", 4096, 4096, 3848, 256,
     "25.11 DeepSeekV3 (w/o MTP) BF16: 256 GPUs, PP 2, VP 4, EP 32"),
    ("gb300-bridge-gpt-oss-120b-bf16", 1280, 4096, 19200, 64,
     "26.04.01 GPT OSS 120B BF16: 64 GPUs, EP 64, MBS 4"),
]
_GB300_HYBRID = [
    ("gb300-bridge-nemotron-3-nano", 512, 8192, 39936, 8,
     "26.08 Nemotron_3_Nano MXFP8: 8 GPUs, EP 8, MBS 4"),
    ("gb300-bridge-nemotron-3-super", 512, 8192, 9856, 64,
     "26.08 Nemotron_3_Super MXFP8: 64 GPUs, EP 64"),
]
B300 = Dataset(
    key="b300", title="B300, fp8 / mxfp8 / bf16: Megatron-Bridge (DGX-B300), held out",
    gpu="B300-SXM-288GB", precision="fp8, mxfp8, bf16", topology="topologies/dgx-b300.yaml",
    source=_BRIDGE.format("1c"), rows=_token_rows(_B300), grids={},
    json="results/calibration-b300.json", derivation=_TOKENS_DERIVATION, matmul_key="matmul_fp8",
    notes="Not fitted: Blackwell Ultra, predicted with the DGX B200 fit (dgx-b200.yaml's "
          "efficiencies and host launch copied into topologies/dgx-b300.yaml; the topology's "
          "header says what differs: memory, 800 Gb/s NICs), so every error here is a held-out "
          "error on a GPU kind meshsim was not fitted to; its attention kernels run at GB300's "
          "own cuDNN measurements (Blackwell Ultra's doubled exponent rate for the softmax "
          "is in them). " + _BRIDGE_RULE)
# GB300 NVL72 as GB200 NVL72: its FP8 / MXFP8 rows fit the FP8 GEMM efficiency (ten rows),
# its BF16 and hybrid rows are predicted with that fit.
_GB300_FIT_NOTE = (
    "Held out first: with the GB200 NVL72's fit (matmul_fp8 0.48) every GB300 row (these, "
    "the BF16 and the hybrid ones) read mean 15.30 %, max 35.28 % (the Llama rows 15-35 % "
    "slow, the MoE rows -7 to +20 %): GB300 runs the same plans 19-31 % faster than GB200 "
    "at the same rated peak (GB300 NVL72 product page: 5 PFLOP/s dense FP8 per GPU, as "
    "GB200); fitted on its own FP8 rows as every other GPU kind. ")
GB300_FP8 = Dataset(
    key="gb300-fp8",
    title="GB300 NVL72, fp8 / mxfp8: Megatron-Bridge (DGX-GB300)",
    gpu="GB300-Blackwell-Ultra-288GB", precision="fp8, mxfp8",
    topology="topologies/gb300-nvl72.yaml",
    source=_BRIDGE.format("1c"),
    rows=_token_rows(_GB300_FP8),
    # As on GB200: the FP8 GEMMs' efficiency only, the H100's kernel overhead.
    grids={"shapes": {"matmul": "0.48,0.52,0.56,0.60,0.62,0.63,0.64,0.65,0.66,0.67,0.68,0.70,0.75",
                      "kernel_overhead_us": "5"}},
    json="results/calibration-gb300-fp8.json",
    derivation=_TOKENS_DERIVATION,
    matmul_key="matmul_fp8",
    notes=_GB300_FIT_NOTE + "256-GPU rows run on 4 NVLink domains of 64 GPUs (16 trays "
          "each). " + _BRIDGE_RULE)
GB300_BF16 = Dataset(
    key="gb300-bf16",
    title="GB300 NVL72, bf16: Megatron-Bridge (DGX-GB300)",
    gpu="GB300-Blackwell-Ultra-288GB", precision="bf16",
    topology="topologies/gb300-nvl72.yaml",
    source=_BRIDGE.format("1c"),
    rows=_token_rows(_GB300_BF16),
    grids={},
    json="results/calibration-gb300-bf16.json",
    derivation=_TOKENS_DERIVATION,
    notes="Not fitted: two rows; predicted with gb300-nvl72's bf16 matmul "
          "estimate (GB200's) and the kernel overhead of its FP8 fit. " + _BRIDGE_RULE)
GB300_HYBRID = Dataset(
    key="gb300-hybrid",
    title="GB300 NVL72, mxfp8: Megatron-Bridge Nemotron 3 (hybrid Mamba-2/MoE), held out",
    gpu="GB300-Blackwell-Ultra-288GB", precision="mxfp8", topology="topologies/gb300-nvl72.yaml",
    source=_BRIDGE.format("1c"), rows=_token_rows(_GB300_HYBRID), grids={},
    json="results/calibration-gb300-hybrid.json", derivation=_TOKENS_DERIVATION,
    matmul_key="matmul_fp8", notes=_HYBRID_NOTES + _BRIDGE_RULE)


H100_AUTOMODEL = Dataset(
    key="h100-automodel",
    title="H100, bf16: NeMo-Automodel (FSDP2) and Megatron-Bridge GPT-OSS",
    gpu="H100-SXM5-80GB", precision="bf16",
    topology="topologies/dgx-h100.yaml",
    source="shared/validation/public_runs.md sections 6a (NVIDIA-NeMo/Automodel "
           "docs/performance-summary.mdx @ 36044ad3) and 1a (Megatron-Bridge)",
    rows=[Row(f"public-{stem}", s, note)
          for stem, s, note in _AUTOMODEL] + _token_rows([
        ("h100-bridge-gpt-oss-120b", 1280, 4096, 5824, 64,
         "Megatron-Bridge 26.04.01 GPT OSS 120B BF16: 64 GPUs, PP 4, EP 8")]),
    grids={},
    json="results/calibration-h100-automodel.json",
    derivation="Automodel: the step times as published (\"Time per Global Step\"); "
               "Megatron-Bridge: " + _TOKENS_DERIVATION,
    notes="Matmul and kernel overhead not fitted here: these rows run the H100 bf16 values "
          "fitted on the Megatron-LM rows (another framework, FSDP2, and other models). One "
          "knob was fitted on five of them: `cluster.efficiency.gmm` (0.55), the expert-GEMM "
          "rate of NeMo-Automodel's `gmm` / `torch_mm` expert libraries, on the five "
          "Automodel MoE rows only (`scripts/fit_grouped_gemm.py --library gmm`; "
          "leave-one-out mean 14.3 %, max 19.2 % after the BF16 refit of 2026-12-03, "
          "eighteenth revision, 12.9 % / 22.1 % before; README \"MoE experts: NeMo-Automodel's "
          "libraries and fake gate\"), so their errors are in-sample for that knob. Rows: every Automodel pre-training row whose model "
          "meshsim can write down (not Nemotron V3, a Mamba hybrid, nor Kimi K2), and the "
          "newest Megatron-Bridge H100 BF16 row (GPT OSS 120B, 26.04.01).")

# The data sets in the order scripts/validate.sh fits them: a GPU's FP8 set before its
# BF16 set where the BF16 fit reuses the FP8 set's kernel overhead. Other modules (e.g.
# scripts/validation_maxtext.py) may add theirs with register().
DATASETS = {d.key: d for d in (KORTHIKANTI, H100_MEGATRON, H100_FP8, H100_AUTOMODEL, B200_FP8,
                               B200_BF16, B200_HYBRID, GB200_FP8, GB200_BF16, GB200_HYBRID,
                               B300, GB300_FP8, GB300_BF16, GB300_HYBRID)}


def register(dataset):
    """Adds a data set (another module's) to DATASETS."""
    DATASETS[dataset.key] = dataset
    return dataset

# Data sets of public_runs.md that meshsim cannot express or has not validated yet
# (validate.py lists them). The MaxText tables (TPU v5p, v5e; H100 A3) are
# scripts/validation_maxtext.py's.
NOT_YET = [
    ("H100: Nemotron_3_Nano (section 1a), GB200: Nemotron_3_Ultra and Nemotron 3.5 Lightning "
     "(section 1b), Nemotron V3 (section 6a)", "a held-out H100 FP8 hybrid data set for the "
     "H100 Nano row (its experiment, public-h100-bridge-nemotron-3-nano, fits with its "
     "recipe's FP8 primary weights and bf16 gradients: 73 GiB of 80) and the "
     "architectures of Ultra and Lightning (not in public_runs.md section 7); the B200 and "
     "GB200 Nano and Super rows are the hybrid held-out data sets"),
    ("H100: Kimi K2 (section 6a), GB200: DeepSeekV4 Flash (section 1b)",
     "their models (not bundled: no architecture reference in public_runs.md section 7)"),
    ("B200 / GB200: NVFP4 rows (section 1b)", "training.dtype fp4 (NVFP4)"),
    ("B300 / GB300: NVFP4 rows and Kimi K2, DeepSeekV4 Flash, Nemotron_3_Ultra (section 1c); "
     "NeMo Framework 25.x B200/GB200 excerpts (section 3)",
     "training.dtype fp4 and those models; section 3's rows are partial excerpts"),
    ("H100 Llama 2 7B and B200 Llama 3 8B long-context rows with context parallelism, 4K to "
     "1024K tokens (section 2c)", "a step time: the table gives model TFLOP/s per GPU only "
     "(no tokens/s; NeMo 24.03.01 and 25.04.rc2 count those FLOPs with formulas public_runs.md "
     "does not give), nor the micro batch, and its batch size is marked uncertain"),
]
