// Choice of all-reduce algorithm on the flow-level network (see flow_collectives.h).
#pragma once

namespace meshsim {

enum class AllReduceAlgorithm { kAuto, kRing, kHierarchical, kTree };

}  // namespace meshsim
