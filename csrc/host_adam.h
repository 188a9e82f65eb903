// One Adam/AdamW step over a host parameter in one pass (pycoll/kernels/host_math.py's adam_step;
// pycoll/optimizer/adam.py). Plain C++17, no Python here: bindings.cpp calls it with the GIL released.
#pragma once

#include <cstdint>

namespace pycoll {

// The scalars of one Adam step, as doubles that are rounded to T once (as NumPy rounds a Python
// float against a T array): decay multiplies the parameter first (AdamW; 1 for none).
struct AdamScalars {
    double decay, beta1, one_minus_beta1, beta2, one_minus_beta2, epsilon, step;
};
// One Adam step in place, each operation rounded in T as Adam's array formula rounds it:
// p *= decay; m = m * b1 + (1 - b1) * g; v = v * b2 + (1 - b2) * (g * g);
// v_max = max(v_max, v) (NaN kept) when v_max is not null; p -= (step * m) / (sqrt(v or v_max) + eps).
template <class T>
void adam_step(T* param, const T* grad, T* m, T* v, T* v_max, int64_t n, const AdamScalars& s);

}  // namespace pycoll
