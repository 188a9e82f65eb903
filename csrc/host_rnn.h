// One time step of the fused recurrent layers (pycoll/nn/rnn_fused.py) on host arrays: all of a
// step but the hidden state's matmul, which NumPy's BLAS does between the calls. A step in NumPy
// took 10-20 array calls, each a microsecond or more on a small batch, so long sequences of a small
// hidden size ran 3-4x slower than paddle; here it is one call. Plain C++17, no Python here:
// bindings.cpp calls these with the GIL released. Values are those of the NumPy formulas in
// rnn_fused.py to float rounding (std::exp and std::tanh in T, not NumPy's own loops).
#pragma once

#include <cstdint>

namespace pycoll {

// The cell of a layer; G below is its gates' width: LSTM 4H (i, f, g, o), GRU 3H (r, z, n),
// the simple RNNs H.
enum class Cell : int { lstm = 0, gru = 1, rnn_tanh = 2, rnn_relu = 3 };

// Arrays are C-contiguous, of B = batch rows; H = hidden.
template <class T>
struct RnnStep {
    int64_t batch, hidden;
    const T* xw;           // [B, G] this step's input projection, biases added (GRU: b_ih alone)
    const T* hw;           // [B, G] h @ w_hh^T (GRU: b_hh not added)
    const T* b_hh;         // GRU: [3H], added here; else null
    const uint8_t* valid;  // [B] or null: where 0 the state is held and the output is 0
    T* gates;              // [B, G] out: the activations (the simple RNNs: the new h, unmasked)
    T* extra;              // [B, H] out: LSTM the c the step started from; GRU hw's n part + b_hh's
    T* prev_h;             // [B, H] out: the h the step started from
    T* out;                // [B, H] out: the step's output
    T* h;                  // [B, H] in/out: the state
    T* c;                  // [B, H] in/out: LSTM's cell state; else null
};

void rnn_step(Cell cell, const RnnStep<float>& s);
void rnn_step(Cell cell, const RnnStep<double>& s);

// Backpropagation through one step, the steps taken last to first.
template <class T>
struct RnnStepBackward {
    int64_t batch, hidden;
    const T* gates;        // [B, G], extra [B, H], prev_h [B, H]: what rnn_step wrote for the step
    const T* extra;
    const T* prev_h;
    const uint8_t* valid;  // [B] or null
    const T* d_out;        // [B, H] the output's gradient at the step, or null
    const T* d_h_in;       // [B, H] the later step's d_hidden @ w_hh, or null (the last step)
    T* d_h;                // [B, H] in/out: the state's gradient carried past the matmul
    T* d_c;                // [B, H] in/out: LSTM's cell state gradient; else null
    T* d_gates;            // [B, G] out: the input side's pre-activation gradients
    T* d_hidden;           // [B, G] out, GRU: the hidden side's (d_gates but n's times r); else null
};

// After the call the state's gradient at the step's start is d_h + d_hidden @ w_hh (GRU) or
// d_h + d_gates @ w_hh (the others): the caller's matmul, given to the next call as d_h_in.
void rnn_step_backward(Cell cell, const RnnStepBackward<float>& s);
void rnn_step_backward(Cell cell, const RnnStepBackward<double>& s);

}  // namespace pycoll
