// Megatron-LM arguments -> the experiment's model keys (megatron_decoders.h).
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "sim/config/megatron_decoders.h"
#include "sim/workload/model_spec.h"

namespace meshsim::megatron_internal {
namespace {

// Expands Megatron's --moe-layer-freq list form: "([0]*3+[1]*58)", "[1,0,1,0]".
std::vector<int> ExpandLayerPattern(const std::string& text) {
  const std::string flag = "--moe-layer-freq";
  std::string s;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  }
  while (s.size() >= 2 && s.front() == '(' && s.back() == ')') s = s.substr(1, s.size() - 2);
  std::vector<int> out;
  size_t i = 0;
  auto bad = [&]() {
    Fail(flag, "expected an integer or a list like ([0]*3+[1]*58), found '" + text + "'");
  };
  while (i < s.size()) {
    if (s[i] != '[') bad();
    const size_t close = s.find(']', i);
    if (close == std::string::npos) bad();
    std::vector<int> items;
    std::stringstream body(s.substr(i + 1, close - i - 1));
    std::string item;
    while (std::getline(body, item, ',')) {
      if (item != "0" && item != "1") bad();
      items.push_back(item == "1" ? 1 : 0);
    }
    i = close + 1;
    long repeat = 1;
    if (i < s.size() && s[i] == '*') {
      char* end = nullptr;
      repeat = std::strtol(s.c_str() + i + 1, &end, 10);
      if (end == s.c_str() + i + 1 || repeat < 0 || repeat > 100000) bad();
      i = static_cast<size_t>(end - s.c_str());
    }
    for (long r = 0; r < repeat; ++r) out.insert(out.end(), items.begin(), items.end());
    if (i < s.size()) {
      if (s[i] != '+') bad();
      ++i;
    }
  }
  return out;
}

// --moe-layer-freq: an integer k (layer i is MoE when i % k == 0) or a 0/1 list per layer.
void DecodeMoeLayerFreq(const Args& a, ModelSpec* m) {
  const std::string flag = "--moe-layer-freq";
  if (!a.Has(flag)) return;
  const std::string s = a.String(flag, "1");
  if (!s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      })) {
    m->moe_every = a.Int32(flag, 1, 1);
    return;
  }
  const std::vector<int> pattern = ExpandLayerPattern(s);
  if (static_cast<int>(pattern.size()) != m->layers) {
    Fail(flag, "the list has " + N(static_cast<long long>(pattern.size())) +
                   " entries but --num-layers is " + N(m->layers));
  }
  const auto first = std::find(pattern.begin(), pattern.end(), 1);
  if (first == pattern.end()) Fail(flag, "the list marks no layer as MoE");
  const int d = static_cast<int>(first - pattern.begin());
  const auto second = std::find(first + 1, pattern.end(), 1);
  const int k = second == pattern.end() ? m->layers - d : static_cast<int>(second - first);
  for (int i = 0; i < m->layers; ++i) {
    const int expected = i >= d && (i - d) % k == 0 ? 1 : 0;
    if (pattern[i] != expected) {
      Fail(flag,
           "only leading dense layers followed by a MoE layer every k layers can be "
           "expressed (dense_layers, moe_every); layer " +
               N(i) + " breaks that pattern");
    }
  }
  m->dense_layers = d;
  m->moe_every = k;
}

void DecodeHeads(const Args& a, MegatronImport* out) {
  ModelSpec& m = out->model;
  m.hidden = a.Required("--hidden-size", 1);
  m.heads = a.Required32("--num-attention-heads", 1);
  if (m.hidden % m.heads != 0) {
    Fail("--num-attention-heads",
         "--num-attention-heads " + N(m.heads) + " does not divide --hidden-size " + N(m.hidden));
  }
  m.kv_heads = m.heads;
  if (a.Flag("--group-query-attention")) {
    m.kv_heads = a.Int32("--num-query-groups", 1, 1);
    if (m.heads % m.kv_heads != 0) {
      Fail("--num-query-groups", "--num-query-groups " + N(m.kv_heads) +
                                     " does not divide --num-attention-heads " + N(m.heads));
    }
  } else if (a.Has("--num-query-groups")) {
    a.Int("--num-query-groups", 1, 1);  // still a malformed value if not an integer
    out->warnings.push_back(
        "--num-query-groups is ignored without --group-query-attention "
        "(as Megatron-LM does)");
  }
  if (a.Has("--kv-channels") && a.Int("--kv-channels", 0, 1) != m.HeadDim()) {
    out->warnings.push_back("--kv-channels " + a.String("--kv-channels", "") +
                            " differs from hidden/heads = " + N(m.HeadDim()) +
                            ", which the model schema assumes: attention is approximate");
  }
}

void DecodeVocab(const Args& a, MegatronImport* out) {
  ModelSpec& m = out->model;
  const int tp = a.Int32("--tensor-model-parallel-size", 1, 1);
  if (a.Has("--padded-vocab-size")) {
    m.vocab = a.Int("--padded-vocab-size", 0, 1);
  } else if (a.Has("--vocab-size")) {
    const int64_t vocab = a.Int("--vocab-size", 0, 1);
    // Both factors are at most 2^30: the product fits an int64.
    const int64_t multiple = int64_t{a.Int32("--make-vocab-size-divisible-by", 128, 1)} * tp;
    m.vocab = (vocab + multiple - 1) / multiple * multiple;
    if (m.vocab > (int64_t{1} << 40)) {
      Fail("--make-vocab-size-divisible-by",
           "expected a plausible size, found a padded vocabulary of " + N(m.vocab));
    }
    if (m.vocab != vocab) {
      out->notes.push_back("vocab " + N(m.vocab) + ": --vocab-size " + N(vocab) +
                           " padded to a multiple of " + N(multiple) + " as Megatron does");
    }
  } else {
    m.vocab = 51200;
    out->notes.push_back(
        "vocab 51200: no --vocab-size or --padded-vocab-size (GPT-2's 50257 "
        "padded; meshsim does not read tokenizer files)");
  }
  if (!a.Flag("--disable-bias-linear")) {
    out->notes.push_back(
        "biases not counted: Megatron adds them to the linear layers unless "
        "--disable-bias-linear (under 0.1% of the parameters)");
  }
  m.tied_embeddings = !a.Flag("--untie-embeddings-and-output-weights");
  if (m.tied_embeddings) {
    out->notes.push_back(
        "tied_embeddings: Megatron ties the input and output embeddings unless "
        "--untie-embeddings-and-output-weights");
  }
}

// Node-limited routing: --moe-router-num-groups groups, --moe-router-group-topk per token.
void DecodeRouterGroups(const Args& a, ModelSpec* m) {
  const int groups = a.Int32("--moe-router-num-groups", 0, 0);
  if (groups <= 1) {
    if (a.Has("--moe-router-group-topk")) a.Int32("--moe-router-group-topk", 0, 0);
    return;
  }
  if (m->experts % groups != 0) {
    Fail("--moe-router-num-groups", "--moe-router-num-groups " + N(groups) +
                                        " does not divide --num-experts " + N(m->experts));
  }
  const int topk = a.Int32("--moe-router-group-topk", 1, 1);
  if (topk > groups || static_cast<int64_t>(topk) * (m->experts / groups) < m->top_k) {
    Fail("--moe-router-group-topk",
         "--moe-router-group-topk " + N(topk) + " must be at most --moe-router-num-groups " +
             N(groups) + " and leave room for --moe-router-topk " + N(m->top_k) + " experts");
  }
  m->moe_router_num_groups = groups;
  m->moe_router_group_topk = topk;
}

void DecodeMoe(const Args& a, MegatronImport* out) {
  ModelSpec& m = out->model;
  m.experts = a.Int32("--num-experts", 0, 0);
  if (m.experts > 0) {
    m.top_k = a.Int32("--moe-router-topk", 2, 1);
    if (m.top_k > m.experts) {
      Fail("--moe-router-topk",
           "--moe-router-topk " + N(m.top_k) + " exceeds --num-experts " + N(m.experts));
    }
    m.moe_ffn_hidden = a.Int("--moe-ffn-hidden-size", m.ffn_hidden, 1);
    const int64_t shared = a.Int("--moe-shared-expert-intermediate-size", 0, 0);
    if (shared > 0) {
      m.shared_experts = static_cast<int>(
          std::max<int64_t>(1, (shared + m.moe_ffn_hidden / 2) / m.moe_ffn_hidden));
      if (shared % m.moe_ffn_hidden != 0) {
        out->warnings.push_back("--moe-shared-expert-intermediate-size " + N(shared) +
                                " is not a multiple of the expert size " + N(m.moe_ffn_hidden) +
                                "; approximated as " + N(m.shared_experts) + " shared experts");
      }
    }
    DecodeMoeLayerFreq(a, &m);
    DecodeRouterGroups(a, &m);
  } else {
    for (const char* flag :
         {"--moe-router-topk", "--moe-ffn-hidden-size", "--moe-shared-expert-intermediate-size",
          "--moe-router-num-groups", "--moe-router-group-topk"}) {
      if (a.Has(flag)) a.Int(flag, 0, 0);
    }
  }
}

}  // namespace

void DecodeModel(const Args& a, MegatronImport* out) {
  ModelSpec& m = out->model;
  m.layers = a.Required32("--num-layers", 1);
  DecodeHeads(a, out);
  const bool swiglu = a.Flag("--swiglu");
  // --quick-geglu is gated too (3 matrices) but keeps the 4*hidden default.
  m.ffn_kind = swiglu || a.Flag("--quick-geglu") ? FfnKind::kSwiglu
               : a.Flag("--squared-relu")        ? FfnKind::kSquaredRelu
                                                 : FfnKind::kGelu;
  const int64_t default_ffn = swiglu ? (4 * m.hidden * 2 / 3) / 64 * 64 : 4 * m.hidden;
  m.ffn_hidden = a.Int("--ffn-hidden-size", default_ffn, 1);
  if (!a.Has("--ffn-hidden-size")) {
    out->notes.push_back("ffn_hidden " + N(m.ffn_hidden) + ": Megatron's default " +
                         (swiglu ? "int(8*hidden/3/64)*64 with --swiglu" : "4*hidden"));
  }
  const char* seq_flag = a.Has("--seq-length")           ? "--seq-length"
                         : a.Has("--encoder-seq-length") ? "--encoder-seq-length"
                                                         : "--max-position-embeddings";
  if (!a.Has(seq_flag)) Fail("--seq-length", "required flag is missing");
  m.seq_len = a.Int(seq_flag, 0, 1);
  if (a.Has("--max-position-embeddings")) a.Int("--max-position-embeddings", 0, 1);
  DecodeVocab(a, out);
  DecodeMoe(a, out);
  m.mtp_layers = a.Int32("--mtp-num-layers", 0, 0);
  m.mtp_repeated_layer = a.Flag("--mtp-use-repeated-layer") && m.mtp_layers > 0;
}

}  // namespace meshsim::megatron_internal
