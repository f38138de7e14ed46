// The stream's samples (rf::SignalSource, computed in float) against Channel::apply's
// (double), quantised: a rail is the double value's nearest step unless that value lies
// within kEdgeSteps of a rounding edge (half a step), where float's rounding, ~6e-8 of full
// scale after a 32-tap filter and the channel's stages, may tip it to the other neighbour.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace hilrig_test {

inline constexpr double kEdgeSteps = 0.02;

inline ::testing::AssertionResult rail_matches(std::int64_t got, double want_steps) {
  const double nearest = std::nearbyint(want_steps);
  if (double(got) == nearest) return ::testing::AssertionSuccess();
  const double from_edge = std::abs(std::abs(want_steps - std::trunc(want_steps)) - 0.5);
  if (std::abs(double(got) - want_steps) <= 0.5 + kEdgeSteps && from_edge <= kEdgeSteps)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << got << " for " << want_steps << " steps (" << from_edge
                                       << " from a rounding edge)";
}

}  // namespace hilrig_test
