// Powers in dB, as the RF figures are written (docs/rf.md "Conventions").
#pragma once
#include <cmath>

namespace hilrig::rf {

// 10·log10(power); -inf for a power of zero (a component that is not there).
inline double power_db(double power) { return power > 0 ? 10 * std::log10(power) : -HUGE_VAL; }

}  // namespace hilrig::rf
