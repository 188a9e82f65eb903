// exp of a non-positive double in branch-free arithmetic that the compiler vectorizes (std::exp
// does not), for the host kernels' float paths (host_math.cpp, host_rnn.cpp): evaluated in double,
// it rounds to the float result NumPy gives but in rare last-bit cases.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

namespace pycoll {
namespace fastmath {

// c[0] + s * (c[1] + s * (...)), unrolled at compile time so that the loops around it vectorize,
// as two interleaved chains in s^2 (even and odd coefficients) to keep more multiplies in flight.
template <std::size_t N, std::size_t... I>
inline double horner_pairs(const double (&c)[N], double s, double s2, std::index_sequence<I...>) {
    constexpr std::size_t last = (N - 1) / 2;  // the pairs (c[2i], c[2i + 1]), i <= last
    double even = c[2 * last], odd = 0.0;  // c[N] = 0 when N is odd
    if constexpr (2 * last + 1 < N) odd = c[2 * last + 1];
    ((even = even * s2 + c[2 * (last - 1 - I)], odd = odd * s2 + c[2 * (last - 1 - I) + 1]), ...);
    return even + s * odd;
}
template <std::size_t N>
inline double horner(const double (&c)[N], double s) {
    return horner_pairs(c, s, s * s, std::make_index_sequence<(N - 1) / 2>{});
}

// exp(y) for y <= 0, to ~3e-13 relative (Taylor to r^11), where only its float rounding matters: below -104 it
// rounds to 0 in float, so y is clamped there; NaN stays NaN.
inline double exp_nonpositive(double y) {
    const double yc = y < -104.0 ? -104.0 : y;
    const double shifter = 0x1.8p52;  // adding it rounds to an integer, left in the low bits
    const double kd = yc * 1.4426950408889634 + shifter;
    uint64_t bits;
    std::memcpy(&bits, &kd, sizeof bits);
    const double k = kd - shifter;
    const double r = (yc - k * 0x1.62e42fefa39efp-1) - k * 0x1.abc9e3b39803fp-56;  // |r| <= ln2/2
    constexpr double kTaylor[] = {1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720,
                                  1.0 / 5040, 1.0 / 40320, 1.0 / 362880, 1.0 / 3628800,
                                  1.0 / 39916800};
    const uint64_t scale_bits = (bits + 1023) << 52;  // 2^k: k + 1023 is in the low bits
    double scale;
    std::memcpy(&scale, &scale_bits, sizeof scale);
    const double e = horner(kTaylor, r) * scale;
    return y != y ? y : e;
}

}  // namespace fastmath
}  // namespace pycoll
