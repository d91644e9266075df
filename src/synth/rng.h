// Counter-based random numbers for the synthetic trace generator: every draw is a pure function of
// (seed, stream tag, indices), so any rank's timeline can be recomputed on its own, in any order, and the
// same seed always gives the same trace (no generator state is carried between ranks or passes).
// Invariant: Draw(seed, a, b, c, d) depends on nothing but its arguments.
#pragma once

#include <cstdint>

namespace strata::synth {

/// SplitMix64 finalizer: a bijective 64-bit mix with good avalanche.
inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// A 64-bit draw for the given seed and indices.
inline uint64_t Draw(uint64_t seed, uint64_t a, uint64_t b = 0, uint64_t c = 0, uint64_t d = 0) {
  uint64_t h = Mix64(seed ^ 0x5eedULL);
  h = Mix64(h ^ a);
  h = Mix64(h ^ (b + 0x1000193ULL));
  h = Mix64(h ^ (c + 0x2000327ULL));
  return Mix64(h ^ (d + 0x30004a1ULL));
}

/// Uniform in [0, 1).
inline double Uniform(uint64_t seed, uint64_t a, uint64_t b = 0, uint64_t c = 0, uint64_t d = 0) {
  return static_cast<double>(Draw(seed, a, b, c, d) >> 11) * 0x1.0p-53;
}

/// 1 + uniform noise in [-spread, +spread].
inline double Jitter(double spread, uint64_t seed, uint64_t a, uint64_t b = 0, uint64_t c = 0, uint64_t d = 0) {
  return 1.0 + spread * (2.0 * Uniform(seed, a, b, c, d) - 1.0);
}

/// Stream tags: one per kind of draw, so that draws of different kinds never collide.
enum Tag : uint64_t {
  kTagClockOffset = 1,
  kTagKernel = 2,
  kTagHostOp = 3,
  kTagTransfer = 4,
  kTagDataLoader = 5,
  kTagDataLoad = 6,
  kTagCounter = 7,
  kTagMemcpy = 8,
  kTagFaultSteps = 9,
};

}  // namespace strata::synth
