// Imports one of tests/fixtures/hf/*.json (a Hugging Face config.json) as `meshsim import hf`
// would, for the tests of what the importer sets; a failed import fails the calling test.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/config/import_hf.h"

namespace meshsim::testing {

inline HfImport ImportHfFixture(const std::string& name, int64_t seq_len = 0) {
  const std::string path = std::string(MESHSIM_SOURCE_DIR) + "/tests/fixtures/hf/" + name + ".json";
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  HfImportOptions o;
  o.source = path;
  o.seq_len = seq_len;
  Result<HfImport> r = ImportHfConfig(text.str(), o);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().ToString());
  return r.ok() ? r.value() : HfImport{};
}

}  // namespace meshsim::testing
