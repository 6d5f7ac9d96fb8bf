#include "sim/config/megatron_args.h"

#include <cassert>

namespace meshsim {
namespace megatron_internal {
namespace {

constexpr FlagArity kSwitch = FlagArity::kSwitch;
constexpr FlagArity kOne = FlagArity::kOne;
constexpr FlagArity kList = FlagArity::kList;
constexpr FlagUse kMapped = FlagUse::kMapped;
constexpr FlagUse kNotModelled = FlagUse::kNotModelled;
constexpr FlagUse kNoEffect = FlagUse::kNoEffect;

// Assumptions shared by several flags.
constexpr const char* kLayout =
    "meshsim splits the layers by plan.stage_layers from the other pipeline flags (evenly by "
    "default, Megatron's), with the embedding on the first stage and the output layer and loss "
    "on the last; write plan.stage_layers by hand for a custom layout";
constexpr const char* kFused =
    "meshsim's element-wise kernel times assume Megatron's fused kernels (its default)";
constexpr const char* kMla =
    "Multi-head Latent Attention is approximated as multi-head attention with "
    "--num-attention-heads heads of hidden/heads (parameters and FLOPs approximate)";
constexpr const char* kOffload =
    "meshsim offloads only whole layers' activations (--cpu-offloading); the rest stays in "
    "device memory";
constexpr const char* kPrecisionOptimizer =
    "meshsim's optimizer keeps fp32 master weights (its moments as --exp-avg-dtype says: "
    "fp32 or bf16)";
constexpr const char* kOtherModel =
    "meshsim models a decoder-only transformer of --num-layers identical layers";

// Every flag meshsim knows. (a) kMapped: import_megatron.cc reads it; (b) kNotModelled:
// warned; (c) kNoEffect: accepted silently. Names as Megatron-LM spells them
// (megatron/training/arguments.py and the dataclasses it turns into flags), older names
// included.
const std::vector<FlagInfo> kTable = {
    // ---- (a) mapped: the model ----
    {"--num-layers", kOne, kMapped, ""},
    {"--hidden-size", kOne, kMapped, ""},
    {"--num-attention-heads", kOne, kMapped, ""},
    {"--group-query-attention", kSwitch, kMapped, ""},
    {"--num-query-groups", kOne, kMapped, ""},
    {"--kv-channels", kOne, kMapped, ""},
    {"--ffn-hidden-size", kOne, kMapped, ""},
    {"--swiglu", kSwitch, kMapped, ""},
    {"--quick-geglu", kSwitch, kMapped, ""},
    {"--seq-length", kOne, kMapped, ""},
    {"--encoder-seq-length", kOne, kMapped, ""},
    {"--max-position-embeddings", kOne, kMapped, ""},
    {"--padded-vocab-size", kOne, kMapped, ""},
    {"--vocab-size", kOne, kMapped, ""},
    {"--make-vocab-size-divisible-by", kOne, kMapped, ""},
    {"--untie-embeddings-and-output-weights", kSwitch, kMapped, ""},
    {"--disable-bias-linear", kSwitch, kMapped, ""},  // a header note when absent
    {"--add-bias-linear", kSwitch, kMapped, ""},
    {"--num-experts", kOne, kMapped, ""},
    {"--moe-router-topk", kOne, kMapped, ""},
    {"--moe-ffn-hidden-size", kOne, kMapped, ""},
    {"--moe-shared-expert-intermediate-size", kOne, kMapped, ""},
    {"--moe-layer-freq", kOne, kMapped, ""},
    // ---- (a) mapped: the plan ----
    {"--world-size", kOne, kMapped, ""},  // meshsim's own: Megatron gets it from the launcher
    {"--tensor-model-parallel-size", kOne, kMapped, ""},
    {"--pipeline-model-parallel-size", kOne, kMapped, ""},
    {"--context-parallel-size", kOne, kMapped, ""},
    {"--cp-comm-type", kList, kMapped, ""},
    {"--expert-model-parallel-size", kOne, kMapped, ""},
    {"--expert-tensor-parallel-size", kOne, kMapped, ""},
    {"--micro-batch-size", kOne, kMapped, ""},
    {"--global-batch-size", kOne, kMapped, ""},
    {"--sequence-parallel", kSwitch, kMapped, ""},
    {"--recompute-activations", kSwitch, kMapped, ""},
    {"--checkpoint-activations", kSwitch, kMapped, ""},  // Megatron-LM before 2022: full
    {"--recompute-granularity", kOne, kMapped, ""},
    {"--recompute-method", kOne, kMapped, ""},
    {"--recompute-num-layers", kOne, kMapped, ""},
    {"--recompute-modules", kList, kMapped, ""},
    {"--num-layers-per-virtual-pipeline-stage", kOne, kMapped, ""},
    {"--num-virtual-stages-per-pipeline-rank", kOne, kMapped, ""},
    {"--decoder-first-pipeline-num-layers", kOne, kMapped, ""},
    {"--decoder-last-pipeline-num-layers", kOne, kMapped, ""},
    {"--num-layers-in-first-pipeline-stage", kOne, kMapped, ""},
    {"--num-layers-in-last-pipeline-stage", kOne, kMapped, ""},
    {"--account-for-embedding-in-pipeline-split", kSwitch, kMapped, ""},
    {"--account-for-loss-in-pipeline-split", kSwitch, kMapped, ""},
    {"--overlap-p2p-communication", kSwitch, kMapped, ""},
    {"--tp-comm-overlap", kSwitch, kMapped, ""},
    {"--no-overlap-p2p-communication", kSwitch, kMapped, ""},
    {"--use-distributed-optimizer", kSwitch, kMapped, ""},
    {"--num-distributed-optimizer-instances", kOne, kMapped, ""},
    {"--use-megatron-fsdp", kSwitch, kMapped, ""},
    {"--use-custom-fsdp", kSwitch, kMapped, ""},
    {"--data-parallel-sharding-strategy", kOne, kMapped, ""},
    {"--use-torch-fsdp2", kSwitch, kMapped, ""},
    {"--overlap-param-gather", kSwitch, kMapped, ""},
    {"--torch-fsdp2-no-reshard-after-forward", kSwitch, kMapped, ""},
    {"--overlap-grad-reduce", kSwitch, kMapped, ""},
    {"--ddp-bucket-size", kOne, kMapped, ""},
    {"--moe-token-dispatcher-type", kOne, kMapped, ""},
    {"--moe-flex-dispatcher-backend", kOne, kMapped, ""},
    {"--moe-grouped-gemm", kSwitch, kMapped, ""},
    {"--moe-expert-capacity-factor", kOne, kMapped, ""},
    {"--moe-flex-dispatcher-num-sms", kOne, kMapped, ""},
    {"--moe-hybridep-num-sms", kOne, kMapped, ""},
    {"--moe-deepep-num-sms", kOne, kMapped, ""},
    {"--use-transformer-engine-op-fuser", kSwitch, kMapped, ""},
    {"--moe-paged-stash", kSwitch, kMapped, ""},
    {"--overlap-moe-expert-parallel-comm", kSwitch, kMapped, ""},
    {"--overlap-dispatch-backward-with-experts-wgrad", kSwitch, kMapped, ""},
    // ---- (a) mapped: training ----
    {"--bf16", kSwitch, kMapped, ""},
    {"--fp16", kSwitch, kMapped, ""},
    {"--fp8-format", kOne, kMapped, ""},
    {"--fp8-recipe", kOne, kMapped, ""},
    {"--fp8-param-gather", kSwitch, kMapped, ""},
    {"--fp8-dot-product-attention", kSwitch, kMapped, ""},
    {"--use-precision-aware-optimizer", kSwitch, kMapped, ""},
    {"--exp-avg-dtype", kOne, kMapped, ""},
    {"--exp-avg-sq-dtype", kOne, kMapped, ""},
    {"--cpu-offloading", kSwitch, kMapped, ""},
    {"--cpu-offloading-num-layers", kOne, kMapped, ""},
    {"--optimizer", kOne, kMapped, ""},
    {"--accumulate-allreduce-grads-in-fp32", kSwitch, kMapped, ""},
    {"--grad-reduce-in-bf16", kSwitch, kMapped, ""},
    {"--use-flash-attn", kSwitch, kMapped, ""},
    {"--cross-entropy-loss-fusion", kSwitch, kMapped, ""},
    {"--cross-entropy-fusion-impl", kOne, kMapped, ""},
    {"--attention-backend", kOne, kMapped, ""},
    {"--transformer-impl", kOne, kMapped, ""},
    {"--cuda-graph-impl", kOne, kMapped, ""},

    // ---- (b) not modelled: the pipeline split ----
    {"--pipeline-model-parallel-layout", kOne, kNotModelled, kLayout},
    {"--microbatch-group-size-per-virtual-pipeline-stage", kOne, kNotModelled,
     "meshsim's interleaved schedule runs groups of pp micro-batches per chunk (Megatron's "
     "default)"},
    {"--overlap-p2p-communication-warmup-flush", kSwitch, kNotModelled,
     "the warm-up and flush phases send and receive as in the steady phase"},
    {"--no-scatter-gather-tensors-in-pipeline", kSwitch, kNotModelled,
     "without sequence parallelism each TP rank sends 1/tp of the activation and the receiver "
     "all-gathers it (Megatron's default scatter-gather)"},
    // ---- (b) not modelled: overlap and scheduling of communication ----
    {"--no-async-tensor-model-parallel-allreduce", kSwitch, kNotModelled,
     "the input gradient's TP reduction overlaps the wgrad GEMM (Megatron's default)"},
    {"--overlap-param-gather-with-optimizer-step", kSwitch, kNotModelled,
     "the first parameter bucket's all-gather starts with the next step, not under the "
     "optimizer step (with --overlap-param-gather), or after the optimizer step"},
    {"--ddp-num-buckets", kOne, kNotModelled,
     "buckets of --ddp-bucket-size parameters, or Megatron's default size"},
    {"--delay-wgrad-compute", kSwitch, kNotModelled,
     "weight gradients are computed right after the input gradients"},
    {"--defer-embedding-wgrad-compute", kSwitch, kNotModelled,
     "the output layer's weight gradient is computed with its input gradient"},
    {"--moe-shared-expert-overlap", kSwitch, kNotModelled,
     "the shared experts run after the routed experts, not during the token dispatch"},
    {"--hierarchical-context-parallel-sizes", kList, kNotModelled,
     "context parallelism is one ring over the cp ranks (p2p)"},
    {"--hybrid-context-parallel", kSwitch, kNotModelled,
     "context parallelism splits every sequence evenly over the cp ranks"},
    {"--use-ring-exchange-p2p", kSwitch, kNotModelled, "pipeline transfers are NCCL send/receive"},
    // ---- (b) not modelled: kernels ----
    {"--no-masked-softmax-fusion", kSwitch, kNotModelled, kFused},
    {"--no-bias-gelu-fusion", kSwitch, kNotModelled, kFused},
    {"--no-bias-swiglu-fusion", kSwitch, kNotModelled, kFused},
    {"--no-bias-dropout-fusion", kSwitch, kNotModelled, kFused},
    {"--no-rope-fusion", kSwitch, kNotModelled, kFused},
    {"--no-gradient-accumulation-fusion", kSwitch, kNotModelled,
     "the wgrad GEMMs accumulate into the gradient buffer (Megatron's fused default)"},
    {"--deterministic-mode", kSwitch, kNotModelled,
     "the default (non-deterministic, faster) kernels"},
    {"--enable-cuda-graph", kSwitch, kMapped, ""},
    {"--external-cuda-graph", kSwitch, kMapped, ""},
    {"--fp32-residual-connection", kSwitch, kNotModelled,
     "the residual stream is stored in the training dtype"},
    // ---- (b) not modelled: memory ----
    {"--fine-grained-activation-offloading", kSwitch, kNotModelled, kOffload},
    {"--optimizer-cpu-offload", kSwitch, kNotModelled, kOffload},
    {"--distribute-saved-activations", kSwitch, kNotModelled,
     "a fully recomputed layer keeps its whole input on every TP rank (split by sequence "
     "parallelism only)"},
    {"--moe-paged-stash-buffer-size-factor-cuda", kOne, kNotModelled,
     "the paged stash's buffer is not counted: the stashed tensors count as their layer's "
     "activations"},
    {"--moe-paged-stash-buffer-size-factor-cpu", kOne, kNotModelled,
     "the paged stash does not spill to host memory"},
    {"--moe-layer-recompute", kSwitch, kNotModelled,
     "MoE layers are recomputed as --recompute-granularity says, like the others"},
    {"--main-grads-dtype", kOne, kNotModelled,
     "gradients as training.grad_accum_dtype (fp32 unless --fp16 or --grad-reduce-in-bf16)"},
    {"--main-params-dtype", kOne, kNotModelled, kPrecisionOptimizer},
    // ---- (b) not modelled: precision ----
    {"--fp4-format", kOne, kNotModelled,
     "GEMMs in the dtype of --bf16 / --fp16 / --fp8-format; FP4 is not modelled"},
    {"--fp4-recipe", kOne, kNotModelled, "FP4 is not modelled"},
    {"--fp4-param-gather", kSwitch, kNotModelled, "FP4 is not modelled"},
    {"--first-last-layers-bf16", kSwitch, kNotModelled,
     "every layer's GEMMs run in FP8 with --fp8-format"},
    // ---- (b) not modelled: the architecture ----
    {"--multi-latent-attention", kSwitch, kNotModelled, kMla},
    {"--q-lora-rank", kOne, kNotModelled, kMla},
    {"--kv-lora-rank", kOne, kNotModelled, kMla},
    {"--qk-head-dim", kOne, kNotModelled, kMla},
    {"--qk-pos-emb-head-dim", kOne, kNotModelled, kMla},
    {"--v-head-dim", kOne, kNotModelled, kMla},
    {"--window-size", kOne, kNotModelled,
     "attention is full causal attention over the sequence (no sliding window)"},
    {"--window-attn-skip-freq", kOne, kNotModelled,
     "attention is full causal attention over the sequence (no sliding window)"},
    {"--add-qkv-bias", kSwitch, kNotModelled, "biases are not counted (parameters or FLOPs)"},
    {"--qk-layernorm", kSwitch, kNotModelled,
     "no LayerNorm on queries and keys (its parameters and time are not counted)"},
    {"--moe-shared-expert-gate", kSwitch, kNotModelled,
     "the shared-expert gate (hidden parameters per MoE layer) is not counted"},
    {"--moe-pad-expert-input-to-capacity", kSwitch, kNotModelled,
     "experts compute on the tokens routed to them, not padded to the capacity"},
    {"--moe-use-upcycling", kSwitch, kNotModelled,
     "the model is the MoE model of the flags, trained from the start"},
    {"--encoder-num-layers", kOne, kNotModelled, kOtherModel},
    {"--decoder-num-layers", kOne, kNotModelled, kOtherModel},
    {"--spec", kList, kNotModelled, kOtherModel},
    {"--hybrid-override-pattern", kOne, kNotModelled, kOtherModel},
    {"--hybrid-layer-pattern", kOne, kNotModelled, kOtherModel},
    {"--is-hybrid-model", kSwitch, kNotModelled, kOtherModel},
    {"--heterogeneous-layers-config-path", kOne, kNotModelled, kOtherModel},
    {"--heterogeneous-layers-config-encoded-json", kOne, kNotModelled, kOtherModel},
    {"--experimental-attention-variant", kOne, kNotModelled, kOtherModel},
    {"--linear-attention-freq", kOne, kNotModelled, kOtherModel},
    {"--enable-mhc-connections", kSwitch, kNotModelled, kOtherModel},
    {"--yaml-cfg", kOne, kNotModelled,
     "only the flags on the command line are read, not this YAML file"},

    // ---- (c) no effect on the simulated step ----
    // Learning rate, optimizer hyper-parameters, regularisation, initialisation.
    {"--lr", kOne, kNoEffect, ""},
    {"--min-lr", kOne, kNoEffect, ""},
    {"--decoupled-lr", kOne, kNoEffect, ""},
    {"--decoupled-min-lr", kOne, kNoEffect, ""},
    {"--warmup", kOne, kNoEffect, ""},
    {"--weight-decay", kOne, kNoEffect, ""},
    {"--start-weight-decay", kOne, kNoEffect, ""},
    {"--end-weight-decay", kOne, kNoEffect, ""},
    {"--weight-decay-incr-style", kOne, kNoEffect, ""},
    {"--apply-wd-to-qk-layernorm", kSwitch, kNoEffect, ""},
    {"--clip-grad", kOne, kNoEffect, ""},
    {"--init-method-std", kOne, kNoEffect, ""},
    {"--init-method-xavier-uniform", kSwitch, kNoEffect, ""},
    {"--hidden-dropout", kOne, kNoEffect, ""},
    {"--attention-dropout", kOne, kNoEffect, ""},
    {"--seed", kOne, kNoEffect, ""},
    {"--data-parallel-random-init", kSwitch, kNoEffect, ""},
    {"--loss-scale", kOne, kNoEffect, ""},
    {"--initial-loss-scale", kOne, kNoEffect, ""},
    {"--min-loss-scale", kOne, kNoEffect, ""},
    {"--loss-scale-window", kOne, kNoEffect, ""},
    {"--hysteresis", kOne, kNoEffect, ""},
    {"--fp8-margin", kOne, kNoEffect, ""},
    {"--fp8-interval", kOne, kNoEffect, ""},
    {"--fp8-amax-history-len", kOne, kNoEffect, ""},
    {"--fp8-amax-compute-algo", kOne, kNoEffect, ""},
    {"--no-fp8-wgrad", kSwitch, kNoEffect, ""},
    {"--num-layers-at-start-in-bf16", kOne, kNoEffect, ""},
    {"--num-layers-at-end-in-bf16", kOne, kNoEffect, ""},
    {"--moe-router-load-balancing-type", kList, kNoEffect, ""},
    {"--moe-aux-loss-coeff", kList, kNoEffect, ""},
    {"--moe-z-loss-coeff", kOne, kNoEffect, ""},
    {"--moe-input-jitter-eps", kOne, kNoEffect, ""},
    {"--moe-router-pre-softmax", kSwitch, kNoEffect, ""},
    {"--moe-router-score-function", kOne, kNoEffect, ""},
    {"--moe-router-topk-scaling-factor", kOne, kNoEffect, ""},
    {"--moe-router-enable-expert-bias", kSwitch, kNoEffect, ""},
    {"--moe-router-bias-update-rate", kOne, kNoEffect, ""},
    {"--moe-router-num-groups", kOne, kMapped, ""},
    {"--moe-router-group-topk", kOne, kMapped, ""},
    {"--moe-router-dtype", kOne, kNoEffect, ""},
    {"--moe-router-fusion", kSwitch, kNoEffect, ""},
    {"--moe-permute-fusion", kSwitch, kNoEffect, ""},
    {"--moe-token-drop-policy", kOne, kNoEffect, ""},
    {"--moe-per-layer-logging", kSwitch, kNoEffect, ""},
    {"--moe-use-legacy-grouped-gemm", kSwitch, kNoEffect, ""},
    // Numerics that cost no modelled time: norms, positions, activations of the same shape.
    {"--normalization", kOne, kNoEffect, ""},
    {"--norm-epsilon", kOne, kNoEffect, ""},
    {"--layernorm-epsilon", kOne, kNoEffect, ""},
    {"--apply-layernorm-1p", kSwitch, kNoEffect, ""},
    {"--apply-residual-connection-post-layernorm", kSwitch, kNoEffect, ""},
    {"--apply-query-key-layer-scaling", kSwitch, kNoEffect, ""},
    {"--attention-softmax-in-fp32", kSwitch, kNoEffect, ""},
    {"--no-attention-softmax-in-fp32", kSwitch, kNoEffect, ""},
    {"--position-embedding-type", kOne, kNoEffect, ""},
    {"--use-rotary-position-embeddings", kSwitch, kNoEffect, ""},
    {"--no-position-embedding", kSwitch, kNoEffect, ""},
    {"--rotary-base", kOne, kNoEffect, ""},
    {"--rotary-percent", kOne, kNoEffect, ""},
    {"--rotary-interleaved", kSwitch, kNoEffect, ""},
    {"--rotary-seq-len-interpolation-factor", kOne, kNoEffect, ""},
    {"--rotary-scaling-factor", kOne, kNoEffect, ""},
    {"--use-rope-scaling", kSwitch, kNoEffect, ""},
    {"--rope-scaling-factor", kOne, kNoEffect, ""},
    {"--rope-type", kOne, kNoEffect, ""},
    {"--no-rope-freq", kOne, kNoEffect, ""},
    {"--mscale", kOne, kNoEffect, ""},
    {"--mscale-all-dim", kOne, kNoEffect, ""},
    {"--squared-relu", kSwitch, kMapped, ""},            // ffn_kind squared_relu
    {"--mtp-num-layers", kOne, kMapped, ""},             // model.mtp_layers
    {"--mtp-use-repeated-layer", kSwitch, kMapped, ""},  // model.mtp_repeated_layer
    {"--openai-gelu", kSwitch, kNoEffect, ""},
    {"--onnx-safe", kOne, kNoEffect, ""},

    {"--no-persist-layer-norm", kSwitch, kNoEffect, ""},
    {"--no-gradient-reduce-div-fusion", kSwitch, kNoEffect, ""},
    {"--fp16-lm-cross-entropy", kSwitch, kNoEffect, ""},
    {"--calculate-per-token-loss", kSwitch, kNoEffect, ""},
    {"--use-legacy-models", kSwitch, kNoEffect, ""},
    {"--use-mcore-models", kSwitch, kNoEffect, ""},
    {"--use-te-rng-tracker", kSwitch, kNoEffect, ""},
    {"--te-rng-tracker", kSwitch, kNoEffect, ""},
    {"--use-cpu-initialization", kSwitch, kNoEffect, ""},
    {"--no-initialization", kSwitch, kNoEffect, ""},
    {"--init-model-with-meta-device", kSwitch, kNoEffect, ""},
    // Sub-options of features that are warned or mapped through their main flag.
    {"--tp-comm-overlap-cfg", kOne, kNoEffect, ""},
    {"--tp-comm-bootstrap-backend", kOne, kNoEffect, ""},
    {"--optimizer-offload-fraction", kOne, kNoEffect, ""},
    {"--cuda-graph-warmup-steps", kOne, kNoEffect, ""},
    {"--cuda-graph-scope", kList, kMapped, ""},
    {"--cuda-graph-modules", kList, kNoEffect, ""},
    {"--moe-paged-stash-page-size", kOne, kNoEffect, ""},
    // The per-rank receive budget: a buffer size; the experts' kernels and the stash's copies
    // move the tokens received (README "What the 26.08 GB200 MXFP8 MoE recipes run").
    {"--moe-expert-rank-capacity-factor", kOne, kNoEffect, ""},
    {"--moe-enable-deepep", kSwitch, kNoEffect, ""},  // with --moe-token-dispatcher-type flex
    {"--align-grad-reduce", kSwitch, kNoEffect, ""},
    {"--no-align-grad-reduce", kSwitch, kNoEffect, ""},
    {"--no-align-param-gather", kSwitch, kNoEffect, ""},
    {"--ddp-average-in-collective", kSwitch, kNoEffect, ""},
    {"--ddp-pad-buckets-for-high-nccl-busbw", kSwitch, kNoEffect, ""},
    {"--outer-dp-sharding-strategy", kOne, kNoEffect, ""},
    {"--megatron-fsdp-version", kOne, kNoEffect, ""},
    {"--fsdp-double-buffer", kSwitch, kNoEffect, ""},
    {"--use-nccl-ub", kSwitch, kNoEffect, ""},
    {"--checkpoint-num-layers", kOne, kNoEffect, ""},
    {"--distribute-checkpointed-activations", kSwitch, kNoEffect, ""},
    // Launch, data, tokenizer, training length, evaluation, checkpoints, logging.
    {"--distributed-backend", kOne, kNoEffect, ""},
    {"--distributed-timeout-minutes", kOne, kNoEffect, ""},
    {"--local-rank", kOne, kNoEffect, ""},
    {"--local_rank", kOne, kNoEffect, ""},
    {"--DDP-impl", kOne, kNoEffect, ""},
    {"--use-contiguous-buffers-in-local-ddp", kSwitch, kNoEffect, ""},
    {"--no-contiguous-buffers-in-local-ddp", kSwitch, kNoEffect, ""},
    {"--disable-gloo-process-groups", kSwitch, kNoEffect, ""},
    {"--empty-unused-memory-level", kOne, kNoEffect, ""},
    {"--manual-gc", kSwitch, kNoEffect, ""},
    {"--manual-gc-interval", kOne, kNoEffect, ""},
    {"--no-check-for-nan-in-loss-and-grad", kSwitch, kNoEffect, ""},
    {"--check-weight-hash-across-dp-replicas-interval", kOne, kNoEffect, ""},
    {"--rampup-batch-size", kList, kNoEffect, ""},  // the steady step is simulated
    {"--train-iters", kOne, kNoEffect, ""},
    {"--train-samples", kOne, kNoEffect, ""},
    {"--batch-size", kOne, kNoEffect, ""},
    {"--split", kOne, kNoEffect, ""},
    {"--vocab-file", kOne, kNoEffect, ""},
    {"--merge-file", kOne, kNoEffect, ""},
    {"--vocab-extra-ids", kOne, kNoEffect, ""},
    {"--mock-data", kSwitch, kNoEffect, ""},
    {"--num-workers", kOne, kNoEffect, ""},
    {"--dataloader-type", kOne, kNoEffect, ""},
    {"--reset-position-ids", kSwitch, kNoEffect, ""},
    {"--reset-attention-mask", kSwitch, kNoEffect, ""},
    {"--eod-mask-loss", kSwitch, kNoEffect, ""},
    {"--no-create-attention-mask-in-dataloader", kSwitch, kNoEffect, ""},
    {"--no-mmap-bin-files", kSwitch, kNoEffect, ""},
    {"--num-dataset-builder-threads", kOne, kNoEffect, ""},
    {"--sample-rate", kOne, kNoEffect, ""},
    {"--mask-prob", kOne, kNoEffect, ""},
    {"--short-seq-prob", kOne, kNoEffect, ""},
    {"--finetune", kSwitch, kNoEffect, ""},
    {"--no-load-optim", kSwitch, kNoEffect, ""},
    {"--no-load-rng", kSwitch, kNoEffect, ""},
    {"--no-save-optim", kSwitch, kNoEffect, ""},
    {"--no-save-rng", kSwitch, kNoEffect, ""},
    {"--use-checkpoint-args", kSwitch, kNoEffect, ""},
    {"--use-dist-ckpt", kSwitch, kNoEffect, ""},
    {"--dist-ckpt-format", kOne, kNoEffect, ""},
    {"--auto-detect-ckpt-format", kSwitch, kNoEffect, ""},
    {"--async-save", kSwitch, kNoEffect, ""},
    {"--no-ckpt-fully-parallel-save", kSwitch, kNoEffect, ""},
    {"--override-opt_param-scheduler", kSwitch, kNoEffect, ""},
    {"--override-opt-param-scheduler", kSwitch, kNoEffect, ""},
    {"--use-checkpoint-opt_param-scheduler", kSwitch, kNoEffect, ""},
    {"--use-checkpoint-opt-param-scheduler", kSwitch, kNoEffect, ""},
    {"--timing-log-level", kOne, kNoEffect, ""},
    {"--timing-log-option", kOne, kNoEffect, ""},
    {"--barrier-with-L1-time", kSwitch, kNoEffect, ""},
    {"--no-barrier-with-level-1-timing", kSwitch, kNoEffect, ""},
    {"--profile", kSwitch, kNoEffect, ""},
    {"--record-memory-history", kSwitch, kNoEffect, ""},
    {"--memory-snapshot-path", kOne, kNoEffect, ""},
    {"--adlr-autoresume", kSwitch, kNoEffect, ""},
    {"--adlr-autoresume-interval", kOne, kNoEffect, ""},
    {"--enable-experimental", kSwitch, kNoEffect, ""},
    {"--fake-process-group", kSwitch, kNoEffect, ""},
    {"--run-workload-inspector-server", kSwitch, kNoEffect, ""},
    {"--app-tag-run-name", kOne, kNoEffect, ""},
    {"--app-tag-run-version", kOne, kNoEffect, ""},
    {"--no-one-logger", kSwitch, kNoEffect, ""},
    {"--enable-ft-package", kSwitch, kNoEffect, ""},
    {"--calc-ft-timeouts", kSwitch, kNoEffect, ""},
    {"--check-for-large-grads", kSwitch, kNoEffect, ""},
    {"--result-rejected-tracker-filename", kOne, kNoEffect, ""},
};

// Families of flags that change nothing meshsim simulates, by prefix. Exact entries of the
// table win over these (e.g. --data-parallel-sharding-strategy is mapped).
const std::vector<std::string> kNoEffectPrefixes = {
    "--lr-",
    "--adam-",
    "--sgd-",
    "--muon-",
    "--lion-",
    "--data-",
    "--train-data",
    "--valid-data",
    "--test-data",
    "--tokenizer-",
    "--eval-",
    "--save",
    "--load",
    "--ckpt-",
    "--exit-",
    "--log-",
    "--tensorboard",
    "--wandb-",
    "--one-logger",
    "--straggler-",
    "--rerun-",
    "--inprocess-",
    "--ft-",
    "--profile-",
    "--inference-",
    "--rl-",
    "--grpo-",
    "--fim-",
    "--logits-",
    "--dino-",
    "--vision-",
    "--biencoder-",
    "--ict-",
    "--retriever-",
    "--num-classes",
    "--img-",
    "--patch-dim",
    "--sft",
    "--msc",
    "--enable-msc",
    "--disable-msc",
    "--yarn-",
    "--dataloader-",
    "--object-storage-",
    "--per-split-",
    "--per-dataset-",
    "--fault-injector",
};

// A no-effect entry for the prefix families: their values run to the next flag.
const FlagInfo kPrefixNoEffect = {"", kList, kNoEffect, ""};

const std::map<std::string, const FlagInfo*>& Index() {
  static const std::map<std::string, const FlagInfo*> index = [] {
    std::map<std::string, const FlagInfo*> m;
    for (const FlagInfo& f : kTable) {
      const bool fresh = m.emplace(f.name, &f).second;
      assert(fresh && "a flag appears twice in the table");
      (void)fresh;
    }
    return m;
  }();
  return index;
}

// The words after position `i` that belong to a flag of `arity` given without '=': up to
// one word (kOne), or every word up to the next flag (kList).
size_t ValueWords(const std::vector<std::string>& tokens, size_t i, FlagArity arity) {
  size_t n = 0;
  while (i + 1 + n < tokens.size() && tokens[i + 1 + n].rfind("--", 0) != 0) {
    ++n;
    if (arity != kList) break;
  }
  return arity == kSwitch ? 0 : n;
}

}  // namespace

const std::vector<FlagInfo>& MegatronFlagTable() { return kTable; }

const FlagInfo* FindMegatronFlag(const std::string& name) {
  const auto& index = Index();
  if (auto it = index.find(name); it != index.end()) return it->second;
  for (const std::string& prefix : kNoEffectPrefixes) {
    if (name.rfind(prefix, 0) == 0) return &kPrefixNoEffect;
  }
  return nullptr;
}

Words Classify(const std::vector<std::string>& tokens, MegatronImport* out) {
  Words w;
  std::vector<std::string> positional;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (t.rfind("--", 0) != 0 || t.size() == 2) {
      positional.push_back(t);
      continue;
    }
    const size_t eq = t.find('=');
    const std::string name = t.substr(0, eq);
    const bool inline_value = eq != std::string::npos;
    const FlagInfo* info = FindMegatronFlag(name);
    // Unknown flags take the next word unless it is a flag.
    const FlagArity arity = info ? info->arity : kOne;
    std::vector<std::string> value;
    if (inline_value) {
      value.push_back(t.substr(eq + 1));
    } else {
      const size_t n = ValueWords(tokens, i, arity);
      value.assign(tokens.begin() + static_cast<long>(i) + 1,
                   tokens.begin() + static_cast<long>(i + 1 + n));
      i += n;
    }
    std::string shown = name;
    for (const std::string& v : value) shown += " " + v;
    if (info == nullptr) {
      out->unknown.push_back(shown);
      continue;
    }
    if (info->use == kNoEffect) continue;
    if (info->use == kNotModelled) {
      out->not_modelled.push_back(shown + " is not modelled: " + info->assumption);
      continue;
    }
    if (arity == kSwitch) {
      if (inline_value) Fail(name, "takes no value, found '" + value[0] + "'");
      w.flags.insert(name);
    } else if (value.empty()) {
      Fail(name, "expects a value, found " + (i + 1 < tokens.size() ? "'" + tokens[i + 1] + "'"
                                                                    : "the end of the arguments"));
    } else {
      w.values[name] = value;
    }
  }
  if (!positional.empty()) {
    std::string list;
    for (const std::string& p : positional) list += (list.empty() ? "" : " ") + p;
    out->warnings.push_back("ignored words that are not flags: " + list);
  }
  return w;
}

}  // namespace megatron_internal

using megatron_internal::Fail;

Result<std::vector<std::string>> SplitShellWords(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else if (c == '\\' && quote == '"' && i + 1 < text.size() &&
                 (text[i + 1] == '"' || text[i + 1] == '\\' || text[i + 1] == '$')) {
        word += text[++i];
      } else {
        word += c;
      }
    } else if (c == '\\') {
      if (i + 1 < text.size() && text[i + 1] == '\n') {
        ++i;  // line continuation
      } else if (i + 1 < text.size()) {
        word += text[++i];
        in_word = true;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) {
    InputError e;
    e.file = kMegatronSource;
    e.message = std::string("unterminated ") + (quote == '"' ? "double" : "single") + " quote";
    return e;
  }
  if (in_word) words.push_back(word);
  return words;
}

}  // namespace meshsim
