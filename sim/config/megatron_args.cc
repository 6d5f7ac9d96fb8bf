#include "sim/config/megatron_args.h"

namespace meshsim {
namespace megatron_internal {
namespace {

// Flags meshsim reads. Value flags take the next word (or --flag=value).
const std::set<std::string> kValueFlags = {"--num-layers",
                                           "--hidden-size",
                                           "--num-attention-heads",
                                           "--num-query-groups",
                                           "--ffn-hidden-size",
                                           "--kv-channels",
                                           "--seq-length",
                                           "--encoder-seq-length",
                                           "--max-position-embeddings",
                                           "--padded-vocab-size",
                                           "--vocab-size",
                                           "--make-vocab-size-divisible-by",
                                           "--tensor-model-parallel-size",
                                           "--pipeline-model-parallel-size",
                                           "--context-parallel-size",
                                           "--expert-model-parallel-size",
                                           "--num-experts",
                                           "--moe-router-topk",
                                           "--moe-ffn-hidden-size",
                                           "--moe-shared-expert-intermediate-size",
                                           "--moe-layer-freq",
                                           "--micro-batch-size",
                                           "--global-batch-size",
                                           "--recompute-granularity",
                                           "--recompute-method",
                                           "--recompute-num-layers",
                                           "--num-layers-per-virtual-pipeline-stage",
                                           "--num-virtual-stages-per-pipeline-rank",
                                           "--fp8-format",
                                           "--optimizer",
                                           "--world-size"};
const std::set<std::string> kBoolFlags = {"--group-query-attention",
                                          "--swiglu",
                                          "--untie-embeddings-and-output-weights",
                                          "--sequence-parallel",
                                          "--recompute-activations",
                                          "--use-distributed-optimizer",
                                          "--bf16",
                                          "--fp16",
                                          "--overlap-p2p-communication"};
// Flags that change nothing meshsim models (learning rate, data, logging, fusions, ...):
// accepted without a warning.
const std::set<std::string> kHarmlessFlags = {"--lr",
                                              "--min-lr",
                                              "--lr-decay-style",
                                              "--lr-decay-iters",
                                              "--lr-decay-samples",
                                              "--lr-warmup-iters",
                                              "--lr-warmup-samples",
                                              "--lr-warmup-fraction",
                                              "--weight-decay",
                                              "--clip-grad",
                                              "--adam-beta1",
                                              "--adam-beta2",
                                              "--adam-eps",
                                              "--init-method-std",
                                              "--hidden-dropout",
                                              "--attention-dropout",
                                              "--train-iters",
                                              "--train-samples",
                                              "--eval-iters",
                                              "--eval-interval",
                                              "--log-interval",
                                              "--save-interval",
                                              "--save",
                                              "--load",
                                              "--data-path",
                                              "--vocab-file",
                                              "--merge-file",
                                              "--tokenizer-type",
                                              "--tokenizer-model",
                                              "--split",
                                              "--seed",
                                              "--distributed-backend",
                                              "--use-mcore-models",
                                              "--transformer-impl",
                                              "--normalization",
                                              "--position-embedding-type",
                                              "--rotary-base",
                                              "--rotary-percent",
                                              "--use-rotary-position-embeddings",
                                              "--disable-bias-linear",
                                              "--no-masked-softmax-fusion",
                                              "--use-flash-attn",
                                              "--attention-softmax-in-fp32",
                                              "--overlap-grad-reduce",
                                              "--overlap-param-gather",
                                              "--no-gradient-accumulation-fusion",
                                              "--accumulate-allreduce-grads-in-fp32",
                                              "--loss-scale",
                                              "--initial-loss-scale",
                                              "--min-loss-scale",
                                              "--loss-scale-window",
                                              "--hysteresis",
                                              "--tensorboard-dir",
                                              "--log-params-norm",
                                              "--log-num-zeros-in-grad",
                                              "--log-throughput",
                                              "--timing-log-level",
                                              "--no-bias-gelu-fusion",
                                              "--no-bias-dropout-fusion",
                                              "--no-async-tensor-model-parallel-allreduce",
                                              "--norm-epsilon",
                                              "--layernorm-epsilon",
                                              "--apply-layernorm-1p",
                                              "--no-position-embedding",
                                              "--moe-router-load-balancing-type",
                                              "--moe-aux-loss-coeff",
                                              "--moe-grouped-gemm",
                                              "--moe-token-dispatcher-type",
                                              "--moe-z-loss-coeff",
                                              "--wandb-project",
                                              "--wandb-exp-name",
                                              "--exit-duration-in-mins",
                                              "--exit-interval",
                                              "--use-checkpoint-args",
                                              "--fp8-margin",
                                              "--fp8-interval",
                                              "--fp8-amax-history-len",
                                              "--fp8-amax-compute-algo",
                                              "--rampup-batch-size",
                                              "--no-load-optim",
                                              "--no-load-rng",
                                              "--finetune",
                                              "--data-cache-path",
                                              "--num-workers"};

}  // namespace

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
    const bool next_is_value = i + 1 < tokens.size() && tokens[i + 1].rfind("--", 0) != 0;
    if (kValueFlags.count(name)) {
      if (inline_value) {
        w.values[name] = t.substr(eq + 1);
      } else if (next_is_value) {
        w.values[name] = tokens[++i];
      } else {
        Fail(name,
             "expects a value, found " +
                 (i + 1 < tokens.size() ? "'" + tokens[i + 1] + "'" : "the end of the arguments"));
      }
    } else if (kBoolFlags.count(name)) {
      if (inline_value) Fail(name, "takes no value, found '" + t.substr(eq + 1) + "'");
      w.flags.insert(name);
    } else {
      // Unknown or harmless: take the next word as its value unless it is a flag.
      std::string shown = t;
      if (!inline_value && next_is_value) shown += " " + tokens[++i];
      if (!kHarmlessFlags.count(name)) out->unknown.push_back(shown);
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
