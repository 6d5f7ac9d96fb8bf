// Measurements of the host process (not of the simulated system).
#pragma once

namespace meshsim {

// Peak resident set size of this process in MiB (Linux VmHWM); 0 if unknown.
double PeakRssMib();

}  // namespace meshsim
