// Megatron-LM arguments -> the experiment's training keys: precision and FP8 recipe,
// optimizer, gradient buffers, attention kernel and CUDA graphs (megatron_decoders.h).
#include <string>
#include <vector>

#include "sim/config/megatron_decoders.h"

namespace meshsim::megatron_internal {
namespace {

// Flash attention: --use-flash-attn, or an --attention-backend that runs a fused kernel
// (auto picks Transformer Engine's fused or flash attention unless --transformer-impl local).
void DecodeAttention(const Args& a, MegatronImport* out) {
  TrainingSpec& t = out->training;
  const std::string impl =
      a.Choice("--transformer-impl", {"transformer_engine", "local", "inference_optimized"},
               "transformer_engine");
  t.flash_attention = a.Flag("--use-flash-attn");
  // The loss: fused only with --cross-entropy-loss-fusion (Megatron-LM's default is unfused).
  t.cross_entropy_fusion = a.Flag("--cross-entropy-loss-fusion");
  // Which fused kernel: Megatron-Core's own (native, its default) or Transformer Engine's.
  if (a.Choice("--cross-entropy-fusion-impl", {"native", "te"}, "native") == "te") {
    t.cross_entropy_impl = CrossEntropyImpl::kTe;
  }
  if (a.Has("--attention-backend")) {
    const std::string backend =
        a.Choice("--attention-backend", {"flash", "fused", "unfused", "local", "auto"}, "");
    const bool fused =
        backend == "flash" || backend == "fused" || (backend == "auto" && impl != "local");
    t.flash_attention = t.flash_attention || fused;
    if (backend == "auto") {
      out->notes.push_back(std::string("flash_attention ") + (fused ? "true" : "false") +
                           ": --attention-backend auto " +
                           (fused ? "picks Transformer Engine's fused or flash attention"
                                  : "with --transformer-impl local is unfused"));
    }
  } else if (!t.flash_attention) {
    out->notes.push_back(
        "flash_attention false: no --use-flash-attn or --attention-backend (newer Megatron-LM "
        "defaults to --attention-backend auto, a fused kernel with Transformer Engine; add it "
        "if the run used one)");
  }
}

// Gradient buffers: Megatron keeps fp32 main_grad with --bf16 (unless --grad-reduce-in-bf16)
// or --accumulate-allreduce-grads-in-fp32; with --fp16 alone they are fp16.
void DecodeGradients(const Args& a, MegatronImport* out) {
  TrainingSpec& t = out->training;
  const bool fp32 = a.Flag("--accumulate-allreduce-grads-in-fp32");
  if (a.Flag("--grad-reduce-in-bf16") && !fp32) {
    t.grad_accum_dtype = GradAccumDtype::kSame;
    out->notes.push_back("grad_accum_dtype same: --grad-reduce-in-bf16");
    return;
  }
  t.grad_accum_dtype = GradAccumDtype::kFp32;
  if (t.dtype == Dtype::kFp16 && !fp32) {
    out->warnings.push_back(
        "--fp16 without --accumulate-allreduce-grads-in-fp32: Megatron keeps fp16 gradient "
        "buffers (reduced in fp16) and fp32 copies for the optimizer step (20 bytes per "
        "parameter with Adam); meshsim models fp32 gradient buffers (grad_accum_dtype fp32: 18 "
        "bytes per parameter, reduced in fp32)");
  }
}

// FP8 primary weights (--fp8-param-gather), FP8 attention (--fp8-dot-product-attention) and
// the precision-aware optimizer's moments
// (--use-precision-aware-optimizer with --exp-avg-dtype and --exp-avg-sq-dtype both bf16).
void DecodeOptimizerPrecision(const Args& a, MegatronImport* out) {
  TrainingSpec& t = out->training;
  t.fp8_param_gather = a.Flag("--fp8-param-gather");
  t.fp8_attention = a.Flag("--fp8-dot-product-attention");
  if (!a.Flag("--use-precision-aware-optimizer")) return;
  const std::vector<std::string> kDtypes = {"fp32", "fp16", "bf16", "fp8"};
  const std::string avg = a.Choice("--exp-avg-dtype", kDtypes, "fp32");
  const std::string avg_sq = a.Choice("--exp-avg-sq-dtype", kDtypes, "fp32");
  if (avg == "bf16" && avg_sq == "bf16") {
    t.moments_dtype = MomentsDtype::kBf16;
    out->notes.push_back("moments_dtype bf16: --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16");
  } else if (avg != "fp32" || avg_sq != "fp32") {
    out->not_modelled.push_back("--exp-avg-dtype " + avg + " --exp-avg-sq-dtype " + avg_sq +
                                " is not modelled: meshsim keeps both moments in fp32 or both "
                                "in bf16; using fp32");
  }
}

// CUDA graphs (Megatron-Core's arguments.py): --cuda-graph-impl local | transformer_engine
// with --cuda-graph-scope, a list of attn, mlp, moe, moe_router, moe_preprocess, mamba,
// full_iteration (empty or the older "full": every transformer layer whole). The older
// --enable-cuda-graph and --external-cuda-graph are the local and TE implementations.
void DecodeCudaGraphs(const Args& a, MegatronImport* out) {
  std::string impl = a.Choice("--cuda-graph-impl", {"none", "local", "transformer_engine"}, "none");
  if (a.Flag("--enable-cuda-graph")) impl = "local";
  if (a.Flag("--external-cuda-graph")) impl = "transformer_engine";
  if (impl == "none") return;
  CudaGraphScope& g = out->training.cuda_graphs;
  std::vector<std::string> scopes = a.List("--cuda-graph-scope");
  if (scopes.empty()) scopes = {"full"};
  for (const std::string& s : scopes) {
    g.attn = g.attn || s == "attn" || s == "full";
    g.mlp = g.mlp || s == "mlp" || s == "full";
    g.moe_router = g.moe_router || s == "moe_router";
    g.moe_preprocess = g.moe_preprocess || s == "moe_preprocess";
    g.mamba = g.mamba || s == "mamba" || s == "full";
    g.full_iteration = g.full_iteration || s == "full_iteration";
    if (s == "moe" || s == "full") {
      out->not_modelled.push_back(
          "--cuda-graph-scope " +
          (s == "full" ? "full (every layer whole, Megatron's default scope) is not modelled: "
                         "meshsim captures each layer's attention, dense MLP and Mamba blocks; "
                         "MoE blocks run eager"
                       : s + " is not modelled: meshsim runs those blocks eager"));
    }
  }
  if (g.moe_preprocess && !g.moe_router) {
    g.moe_preprocess = false;
    out->warnings.push_back(
        "--cuda-graph-scope moe_preprocess without moe_router: meshsim captures the dispatch "
        "preprocessing only with the router; left eager");
  }
  std::string words;
  for (const std::string& s : scopes) words += (words.empty() ? "" : " ") + s;
  out->notes.push_back("cuda_graphs from --cuda-graph-impl " + impl + " --cuda-graph-scope " +
                       words);
}

}  // namespace

void DecodeTraining(const Args& a, MegatronImport* out) {
  TrainingSpec& t = out->training;
  if (a.Has("--fp8-format")) {
    a.Choice("--fp8-format", {"e4m3", "hybrid"}, "");
    t.dtype = Dtype::kFp8;
  } else if (a.Flag("--bf16")) {
    t.dtype = Dtype::kBf16;
  } else if (a.Flag("--fp16")) {
    t.dtype = Dtype::kFp16;
  } else {
    t.dtype = Dtype::kBf16;
    out->warnings.push_back(
        "no --bf16, --fp16 or --fp8-format: Megatron would train in fp32, "
        "which meshsim does not model; using bf16");
  }
  const std::string recipe = a.Choice(
      "--fp8-recipe", {"delayed", "tensorwise", "mxfp8", "blockwise", "custom"}, "delayed");
  // tensorwise: Megatron's name for TE's current scaling (Float8CurrentScaling).
  if (recipe == "tensorwise") t.fp8_recipe = Fp8Recipe::kCurrent;
  if (recipe == "blockwise") t.fp8_recipe = Fp8Recipe::kBlockwise;
  if (recipe == "mxfp8") t.fp8_recipe = Fp8Recipe::kMxfp8;
  if (t.dtype == Dtype::kFp8 && recipe == "custom") {
    out->not_modelled.push_back("--fp8-recipe " + recipe +
                                " is not modelled: meshsim models TE's delayed, tensorwise "
                                "(current), blockwise and mxfp8 recipes; using delayed");
  }
  const std::string optimizer = a.String("--optimizer", "adam");
  t.optimizer = optimizer == "sgd" ? Optimizer::kSgd : Optimizer::kAdam;
  if (optimizer != "adam" && optimizer != "sgd") {
    out->not_modelled.push_back("--optimizer " + optimizer +
                                " is not modelled: meshsim models Adam (12 bytes of optimizer "
                                "state per parameter and its update kernels)");
  }
  DecodeGradients(a, out);
  DecodeOptimizerPrecision(a, out);
  DecodeAttention(a, out);
  DecodeCudaGraphs(a, out);
}

}  // namespace meshsim::megatron_internal
