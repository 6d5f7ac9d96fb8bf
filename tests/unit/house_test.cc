// The house (STYLE.md): every #include "sim/<floor>/..." in sim/ points down the floor
// list, so that an upward import (a cycle in waiting) fails a test. The table below is
// the list, written out: each floor with the floors it may import (its own is implicit).
//
//   core      nothing of ours (time, event queue, simulator, shared vocabulary:
//             dtype.h, collective_kinds.h)
//   hw        core
//   net       core, hw
//   workload  core
//   plan      core, hw, workload
//   schedule  plan and what plan may import
//   engine    every floor above (core ... schedule)
//   report    engine and below;  sweep: report and below;  config: sweep and below;
//   cli       everything
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace meshsim {
namespace {

namespace fs = std::filesystem;

using Floors = std::set<std::string>;

// Declarative: the floor list of STYLE.md.
const std::map<std::string, Floors>& AllowedImports() {
  static const std::map<std::string, Floors> kAllowed = [] {
    std::map<std::string, Floors> a;
    a["core"] = {};
    a["hw"] = {"core"};
    a["net"] = {"core", "hw"};
    a["workload"] = {"core"};
    a["plan"] = {"core", "hw", "workload"};
    a["schedule"] = {"core", "hw", "workload", "plan"};
    a["engine"] = {"core", "hw", "net", "workload", "plan", "schedule"};
    a["report"] = a["engine"];
    a["report"].insert("engine");
    a["sweep"] = a["report"];
    a["sweep"].insert("report");
    a["config"] = a["sweep"];
    a["config"].insert("sweep");
    a["cli"] = a["config"];
    a["cli"].insert("config");
    return a;
  }();
  return kAllowed;
}

// The floor named by an #include line ("sim/<floor>/..."), or "" for other lines.
std::string IncludedFloor(const std::string& line) {
  const std::string prefix = "#include \"sim/";
  const size_t at = line.find(prefix);
  if (at == std::string::npos || line.find_first_not_of(" \t") != at) return "";
  const size_t begin = at + prefix.size();
  const size_t slash = line.find('/', begin);
  return slash == std::string::npos ? "" : line.substr(begin, slash - begin);
}

// "file: includes sim/<floor>/" for every include in `text` that `floor` may not import.
std::vector<std::string> Violations(const std::string& floor, const std::string& file,
                                    std::istream& text) {
  std::vector<std::string> out;
  const auto allowed = AllowedImports().find(floor);
  std::string line;
  while (std::getline(text, line)) {
    const std::string to = IncludedFloor(line);
    if (to.empty() || to == floor) continue;
    if (allowed == AllowedImports().end() || !allowed->second.contains(to)) {
      out.push_back(file + ": includes sim/" + to + "/");
    }
  }
  return out;
}

const fs::path kSim = fs::path(MESHSIM_SOURCE_DIR) / "sim";

TEST(House, EveryFolderOfSimIsAFloor) {
  for (const auto& entry : fs::directory_iterator(kSim)) {
    if (!entry.is_directory()) continue;
    EXPECT_TRUE(AllowedImports().contains(entry.path().filename().string()))
        << entry.path() << " is not in the floor list (STYLE.md, house_test.cc)";
  }
}

TEST(House, IncludesPointDownTheFloorList) {
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kSim)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".h" && ext != ".cc")) continue;
    const std::string floor = fs::relative(entry.path(), kSim).begin()->string();
    std::ifstream in(entry.path());
    for (const std::string& v : Violations(floor, fs::relative(entry.path(), kSim).string(), in)) {
      ADD_FAILURE() << v;
    }
    ++files;
  }
  EXPECT_GT(files, 100) << "found too few sources under " << kSim;
}

// The checker itself: it catches what the issue found (plan/ and schedule/ importing
// net/), and lets through what the list allows.
TEST(House, CheckerFlagsUpwardImports) {
  std::istringstream plan("#include <vector>\n#include \"sim/net/algorithm.h\"\n");
  EXPECT_EQ(Violations("plan", "plan/plan_spec.h", plan),
            std::vector<std::string>{"plan/plan_spec.h: includes sim/net/"});
  std::istringstream schedule("#include \"sim/plan/mesh.h\"\n#include \"sim/engine/replay.h\"\n");
  EXPECT_EQ(Violations("schedule", "x.h", schedule),
            std::vector<std::string>{"x.h: includes sim/engine/"});
  std::istringstream core("#include \"sim/hw/topology.h\"\n");
  EXPECT_EQ(Violations("core", "c.h", core).size(), 1u);
  std::istringstream engine("#include \"sim/net/network.h\"\n// #include \"sim/cli/x.h\"\n");
  EXPECT_TRUE(Violations("engine", "e.h", engine).empty());
  std::istringstream unknown("#include \"sim/core/time.h\"\n");
  EXPECT_EQ(Violations("attic", "a.h", unknown).size(), 1u) << "a new floor must be placed";
}

}  // namespace
}  // namespace meshsim
