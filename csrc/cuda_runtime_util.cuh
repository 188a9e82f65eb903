// What every CUDA source of pycoll._C needs around its launches: CUDA errors as C++ exceptions,
// and the arrays' device made current for the call.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace pycoll::cuda {

// Throws std::runtime_error naming `what` (the CUDA call) and CUDA's error when `err` is one.
inline void check(cudaError_t err, const char* what) {
    if (err != cudaSuccess) {
        throw std::runtime_error(std::string("pycoll CUDA kernels: ") + what + " failed: " +
                                 cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
    }
}

// Makes `device` current for the CUDA runtime linked into pycoll._C, and restores the previous
// one after.
class DeviceGuard {
   public:
    explicit DeviceGuard(int device) : device_(device) {
        check(cudaGetDevice(&previous_), "cudaGetDevice");
        if (previous_ != device_) check(cudaSetDevice(device_), "cudaSetDevice");
    }
    DeviceGuard(const DeviceGuard&) = delete;
    DeviceGuard& operator=(const DeviceGuard&) = delete;
    ~DeviceGuard() {
        if (previous_ != device_) cudaSetDevice(previous_);
    }

   private:
    int device_;
    int previous_ = 0;
};

}  // namespace pycoll::cuda
