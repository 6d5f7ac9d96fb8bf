// Fuzz target: `meshsim import hf` on a Hugging Face config.json text. An accepted
// config must give model YAML that the model decoder reads back as the same model (the
// CLI reports anything else as an internal error).
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/config/decode.h"
#include "sim/config/import_hf.h"
#include "tests/fuzz/fuzz_common.h"

namespace meshsim::fuzz {
namespace {

bool SameModel(const ModelSpec& a, const ModelSpec& b) {
  return a.name == b.name && a.layers == b.layers && a.hidden == b.hidden && a.heads == b.heads &&
         a.kv_heads == b.kv_heads && a.ffn_hidden == b.ffn_hidden && a.ffn_kind == b.ffn_kind &&
         a.vocab == b.vocab && a.seq_len == b.seq_len && a.tied_embeddings == b.tied_embeddings &&
         a.experts == b.experts && a.top_k == b.top_k && a.moe_ffn_hidden == b.moe_ffn_hidden &&
         a.shared_experts == b.shared_experts && a.moe_every == b.moe_every &&
         a.dense_layers == b.dense_layers;
}

// The model YAML of `import`, decoded as LoadModelFile would.
void CheckRoundTrip(const HfImport& import, const HfImportOptions& options) {
  const std::string yaml = HfModelYaml(import, options);
  try {
    config::Sources src;
    src.file = "imported.yaml";
    config::YamlReader r(config::ParseYamlFileText(yaml, src.file), "", src);
    Require(SameModel(config::DecodeModel(r), import.model),
            "the imported model reads back differently:\n" + yaml);
  } catch (const config::ConfigError& e) {
    Require(false, "the imported model does not load:\n" + yaml, &e.error);
  } catch (const YAML::Exception& e) {
    Require(false, std::string("the imported model is not YAML: ") + e.what() + "\n" + yaml);
  }
}

}  // namespace
}  // namespace meshsim::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshsim;
  HfImportOptions options;
  options.source = "fuzz.json";
  options.command = "meshsim import hf fuzz.json";
  const Result<HfImport> imported =
      ImportHfConfig(std::string(reinterpret_cast<const char*>(data), size), options);
  if (imported.ok()) {
    fuzz::CheckRoundTrip(imported.value(), options);
  } else {
    fuzz::CheckError(imported.error());
  }
  return 0;
}
