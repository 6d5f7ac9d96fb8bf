// SummaryText / WriteSummaryText: summary.json written without building the devices' JSON
// must read exactly as SummaryJson(s).dump(2), which `meshsim run` wrote before.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/report/summary.h"

namespace meshsim {
namespace {

StepSummary Simulated(const std::vector<std::string>& sets) {
  Result<Experiment> e = LoadExperimentFile(
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/default.yaml", sets);
  EXPECT_TRUE(e.ok());
  return SummarizeStep(*Simulate(e.value()), SummaryOptions{true});
}

void ExpectSameText(const StepSummary& s) {
  const std::string expected = SummaryJson(s).dump(2);
  EXPECT_EQ(SummaryText(s), expected);
  std::ostringstream streamed;
  WriteSummaryText(s, streamed);
  EXPECT_EQ(streamed.str(), expected);
}

TEST(SummaryText, ReadsAsTheJsonDumpOfASymmetricReplay) {
  const StepSummary s = Simulated({});
  ASSERT_GT(s.devices.size(), 1u);
  ExpectSameText(s);
}

TEST(SummaryText, ReadsAsTheJsonDumpWithWhatIfsAndDataParallelCollectives) {
  ExpectSameText(
      Simulated({"plan.zero=3", "cluster.what_if.links=[{link: node0.nic0, failed: true}]"}));
}

TEST(SummaryText, DevicesWithEqualMeasurementsShareTextButNotTheirIdentity) {
  StepSummary s;
  s.name = "a \"quoted\" name\nwith a newline";
  s.step_time_s = std::numeric_limits<double>::quiet_NaN();
  for (int r = 0; r < 5; ++r) {
    DeviceSummary d;
    d.rank = r;
    d.node = -r;
    d.coords = Coords{r, 1, 2, 3, 4};
    d.peak_memory_gib = r % 2 ? -0.0 : 0.0;  // formats differently: not one text
    d.memory_breakdown_gib.weights = r < 3 ? 1e300 : std::numeric_limits<double>::infinity();
    d.sent_bytes[1] = 0.1 + 0.2;
    s.devices.push_back(d);
  }
  s.links.push_back({"nvlink", 1.5, 0.25, 8});
  ExpectSameText(s);
  s.devices.clear();  // no "devices" member at all
  s.links.clear();
  ExpectSameText(s);
}

}  // namespace
}  // namespace meshsim
