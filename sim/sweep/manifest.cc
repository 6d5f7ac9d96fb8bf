#include "sim/sweep/manifest.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/core/atomic_file.h"

namespace meshsim {

namespace fs = std::filesystem;

Result<SweepManifest> ReadManifest(const std::string& outdir) {
  const std::string path = (fs::path(outdir) / "sweep.json").string();
  std::ifstream in(path);
  if (!in) return BadInput(path, "cannot open file: " + std::string(std::strerror(errno)));
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    SweepManifest m;
    m.name = j.at("sweep").get<std::string>();
    m.fingerprint = j.at("fingerprint").get<std::string>();
    m.configurations = j.at("configurations").get<int64_t>();
    m.shard_index = j.at("shard").at("index").get<int>();
    m.shard_count = j.at("shard").at("count").get<int>();
    m.columns = j.at("columns").get<std::vector<std::string>>();
    return m;
  } catch (const nlohmann::json::exception& ex) {
    return BadInput(path, std::string("not a meshsim sweep manifest: ") + ex.what());
  }
}

Status WriteManifest(const std::string& outdir, const SweepManifest& m) {
  nlohmann::ordered_json j;
  j["sweep"] = m.name;
  j["fingerprint"] = m.fingerprint;
  j["configurations"] = m.configurations;
  j["shard"] = {{"index", m.shard_index}, {"count", m.shard_count}};
  j["columns"] = m.columns;
  return WriteFileAtomically((fs::path(outdir) / "sweep.json").string(), j.dump(2) + "\n");
}

}  // namespace meshsim
