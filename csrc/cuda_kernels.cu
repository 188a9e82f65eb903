// CUDA kernels: see cuda_kernels.h.
//
// One launch copies every array of a call. The work is cut into tiles, each inside one array:
// block b copies tile b, found through a device-resident table (per array: source, destination,
// element count, first tile; per tile: its array). The table is built and uploaded once per
// array list and kept for the next calls with the same pointers, sizes and types (the last 64
// lists of each device).
//
// Inside an array, elements move in 16-byte chunks: every store is an aligned 16-byte vector
// store, every load a 16-byte vector load, shifted into place when the source's alignment
// differs from the destination's (flattening arrays of odd sizes makes that the common case);
// the few elements before the destination is aligned, and the tail after the last whole chunk,
// are copied one by one.
#include "cuda_kernels.h"
#include "cuda_runtime_util.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#define PYCOLL_STR_(x) #x
#define PYCOLL_STR(x) PYCOLL_STR_(x)

namespace pycoll::cuda {

const char* name(Type t) {
    switch (t) {
        case Type::bytes: return "bytes";
        case Type::f16: return "float16";
        case Type::bf16: return "bfloat16";
        case Type::f32: return "float32";
        case Type::f64: return "float64";
    }
    return "?";
}

std::size_t size_of(Type t) {
    switch (t) {
        case Type::bytes: return 1;
        case Type::f16:
        case Type::bf16: return 2;
        case Type::f32: return 4;
        case Type::f64: return 8;
    }
    return 0;
}

bool cast_supported(Type from, Type to) {
    if (from == to) return true;
    const auto either = [&](Type a, Type b) {
        return (from == a && to == b) || (from == b && to == a);
    };
    return either(Type::f32, Type::f16) || either(Type::f32, Type::bf16) ||
           either(Type::f32, Type::f64);
}

std::string nvcc_version() {
    return PYCOLL_STR(__CUDACC_VER_MAJOR__) "." PYCOLL_STR(__CUDACC_VER_MINOR__) "." PYCOLL_STR(
        __CUDACC_VER_BUILD__);
}

std::string runtime_version() {
    return std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10);
}

namespace {

// ---------------------------------------------------------------------------------------------
// Device code. The per-thread work is __host__ __device__ so that it can be checked on a host.

constexpr int kThreads = 256;  // threads per block
constexpr int kUnroll = 4;     // chunks each thread has in flight
constexpr int64_t kTileChunks = int64_t(kThreads) * kUnroll;  // chunks per tile

// One array's copy: `count` elements from src to dst. The first `head` elements go one by one,
// until dst is 16-byte aligned; then whole chunks; then the tail, one by one. The array owns the
// tiles first_tile ... first_tile + tiles_of(chunks) - 1 of the launch.
struct Segment {
    const char* src;
    char* dst;
    int64_t count;
    int64_t first_tile;
    int64_t head;
};

// float16 and bfloat16 in memory: their bits.
struct F16 {
    uint16_t bits;
};
struct BF16 {
    uint16_t bits;
};

// Reading an element into the compute type C, and rounding one back (to nearest even).
template <class C, class S>
__host__ __device__ inline C widen(S x) {
    return static_cast<C>(x);
}
template <>
__host__ __device__ inline float widen<float, F16>(F16 x) {
    return __half2float(__ushort_as_half(x.bits));
}
template <>
__host__ __device__ inline float widen<float, BF16>(BF16 x) {
    return __bfloat162float(__ushort_as_bfloat16(x.bits));
}
template <class D, class C>
__host__ __device__ inline D narrow(C x) {
    return static_cast<D>(x);
}
template <>
__host__ __device__ inline F16 narrow<F16, float>(float x) {
    return F16{__half_as_ushort(__float2half_rn(x))};
}
template <>
__host__ __device__ inline BF16 narrow<BF16, float>(float x) {
    return BF16{__bfloat16_as_ushort(__float2bfloat16_rn(x))};
}

template <class S, class D, class C>
__host__ __device__ inline D convert(S x, C scale, bool scaled) {
    C v = widen<C>(x);
    if (scaled) v = v * scale;
    return narrow<D>(v);
}

// A chunk is the fewest elements whose bytes fill whole 16-byte words on both sides.
template <class S, class D>
struct Chunk {
    static constexpr int kElems = 16 / (sizeof(S) < sizeof(D) ? sizeof(S) : sizeof(D));
    static constexpr int kIn = kElems * sizeof(S) / 16;   // words read
    static constexpr int kOut = kElems * sizeof(D) / 16;  // words written
};

template <class T, int kElems, int kWords>
union Words {
    uint4 w[kWords];
    T e[kElems];
};

__host__ __device__ inline int64_t tiles_of(int64_t chunks) {
    return chunks > 0 ? (chunks + kTileChunks - 1) / kTileChunks : 1;
}

// 16-byte loads and stores; the loads go through the read-only cache on the device, as no array
// is written while the kernel reads it.
__host__ __device__ inline uint4 load16(const uint4* p) {
#ifdef __CUDA_ARCH__
    return __ldg(p);
#else
    return *p;
#endif
}

__host__ __device__ inline void store16(uint4* p, uint4 v) {
#ifdef __CUDA_ARCH__
    __stwb(p, v);
#else
    *p = v;
#endif
}

// The low 32 bits of (hi:lo) >> shift, shift < 32.
__host__ __device__ inline uint32_t funnel(uint32_t lo, uint32_t hi, uint32_t shift) {
#ifdef __CUDA_ARCH__
    return __funnelshift_r(lo, hi, shift);
#else
    return shift == 0 ? lo : (lo >> shift) | (hi << (32 - shift));
#endif
}

// v = the kWords 16-byte words that start 4 * kSkip + shift / 8 bytes into a (little-endian).
template <int kWords, int kSkip>
__host__ __device__ inline void shift_words(const uint4 (&a)[kWords + 1], uint4 (&v)[kWords],
                                            uint32_t shift) {
    uint32_t w[4 * kWords + 4];
#pragma unroll
    for (int k = 0; k <= kWords; ++k) {
        w[4 * k] = a[k].x;
        w[4 * k + 1] = a[k].y;
        w[4 * k + 2] = a[k].z;
        w[4 * k + 3] = a[k].w;
    }
    uint32_t o[4 * kWords];
#pragma unroll
    for (int j = 0; j < 4 * kWords; ++j) o[j] = funnel(w[j + kSkip], w[j + kSkip + 1], shift);
#pragma unroll
    for (int k = 0; k < kWords; ++k) {
        v[k] = make_uint4(o[4 * k], o[4 * k + 1], o[4 * k + 2], o[4 * k + 3]);
    }
}

// v = the kWords 16-byte words that start r bytes (0 < r < 16) into a.
template <int kWords>
__host__ __device__ inline void realign(const uint4 (&a)[kWords + 1], uint32_t r,
                                        uint4 (&v)[kWords]) {
    const uint32_t shift = 8 * (r & 3);
    switch (r >> 2) {
        case 0: shift_words<kWords, 0>(a, v, shift); break;
        case 1: shift_words<kWords, 1>(a, v, shift); break;
        case 2: shift_words<kWords, 2>(a, v, shift); break;
        default: shift_words<kWords, 3>(a, v, shift); break;
    }
}

// Thread `tid` of the block that copies tile `tile` of segment s.
template <class S, class D, class C>
__host__ __device__ inline void copy_tile(const Segment& s, int64_t tile, C scale, bool scaled,
                                          int tid) {
    using G = Chunk<S, D>;
    const int64_t chunks = (s.count - s.head) / G::kElems;
    const char* vsrc = s.src + s.head * int64_t(sizeof(S));
    auto* vdst = reinterpret_cast<uint4*>(s.dst + s.head * int64_t(sizeof(D)));  // aligned
    // The source's misalignment, the same for every chunk of the array (so no divergence). A
    // misaligned chunk is read as kIn + 1 aligned words, shifted into place: the extra word holds
    // the chunk's last bytes, so the read stays inside the array's allocation.
    const auto r = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(vsrc) & 15);
    const auto* base = reinterpret_cast<const uint4*>(vsrc - r);
    const int64_t first = tile * kTileChunks + tid;  // neighbours take neighbouring chunks

    uint4 raw[kUnroll][G::kIn + 1];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {  // every load first, so that they are in flight together
        const int64_t c = first + int64_t(u) * kThreads;
        if (c < chunks) {
#pragma unroll
            for (int k = 0; k < G::kIn; ++k) raw[u][k] = load16(base + c * G::kIn + k);
            if (r != 0) raw[u][G::kIn] = load16(base + c * G::kIn + G::kIn);
        }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
        const int64_t c = first + int64_t(u) * kThreads;
        if (c < chunks) {
            Words<S, G::kElems, G::kIn> in;
            if (r != 0) {
                realign<G::kIn>(raw[u], r, in.w);
            } else {
#pragma unroll
                for (int k = 0; k < G::kIn; ++k) in.w[k] = raw[u][k];
            }
            Words<D, G::kElems, G::kOut> out;
#pragma unroll
            for (int e = 0; e < G::kElems; ++e) out.e[e] = convert<S, D, C>(in.e[e], scale, scaled);
#pragma unroll
            for (int k = 0; k < G::kOut; ++k) store16(vdst + c * G::kOut + k, out.w[k]);
        }
    }

    // One by one: the head in the array's first tile, the tail in its last.
    const auto* src = reinterpret_cast<const S*>(s.src);
    auto* dst = reinterpret_cast<D*>(s.dst);
    if (tile == 0) {
        for (int64_t e = tid; e < s.head; e += kThreads) {
            dst[e] = convert<S, D, C>(src[e], scale, scaled);
        }
    }
    if (tile == tiles_of(chunks) - 1) {
        for (int64_t e = s.head + chunks * G::kElems + tid; e < s.count; e += kThreads) {
            dst[e] = convert<S, D, C>(src[e], scale, scaled);
        }
    }
}

template <class S, class D, class C>
__global__ void __launch_bounds__(kThreads)
    copy_kernel(const Segment* segments, const int32_t* tile_segment, int64_t tiles, C scale,
                bool scaled) {
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const Segment s = segments[tile_segment[t]];
        copy_tile<S, D, C>(s, t - s.first_tile, scale, scaled, static_cast<int>(threadIdx.x));
    }
}

// ---------------------------------------------------------------------------------------------
// Host code: the table, its cache, the launch.

enum class Direction { flatten, unflatten };

// The table of one call, on the host.
struct Plan {
    std::vector<Segment> segments;
    std::vector<int32_t> tile_segment;
};

Plan make_plan(Direction dir, const std::vector<Piece>& pieces, const char* flat, Type from,
               Type to) {
    const auto in = static_cast<int64_t>(size_of(from));
    const auto out = static_cast<int64_t>(size_of(to));
    const int64_t elems = 16 / std::min(in, out);  // Chunk<S, D>::kElems
    Plan plan;
    int64_t offset = 0;  // in the flat buffer, in elements
    for (const Piece& piece : pieces) {
        if (piece.count == 0) continue;
        if (plan.segments.size() == INT32_MAX) throw std::invalid_argument("too many arrays");
        Segment s{};
        if (dir == Direction::flatten) {
            s.src = static_cast<const char*>(piece.data);
            s.dst = const_cast<char*>(flat) + offset * out;
        } else {
            s.src = flat + offset * in;
            s.dst = static_cast<char*>(piece.data);
        }
        offset += piece.count;
        s.count = piece.count;
        const auto misaligned = static_cast<int64_t>(reinterpret_cast<uintptr_t>(s.dst) & 15);
        s.head = std::min(misaligned != 0 ? (16 - misaligned) / out : 0, s.count);
        s.first_tile = static_cast<int64_t>(plan.tile_segment.size());
        plan.tile_segment.insert(plan.tile_segment.end(), tiles_of((s.count - s.head) / elems),
                                 static_cast<int32_t>(plan.segments.size()));
        plan.segments.push_back(s);
    }
    return plan;
}

// A plan uploaded to the device (the current one), with an event recorded after its upload and
// after each launch that reads it. Every launch waits for that event first, so that the table is
// complete whatever the stream, and the table is freed after the last launch that read it. Its
// memory comes from the stream-ordered allocator: allocating and freeing it never waits for the
// device (cudaMalloc and cudaFree may).
class Table {
   public:
    Table(std::vector<uint64_t> key, const Plan& plan, cudaStream_t stream)
        : key_(std::move(key)), tiles_(static_cast<int64_t>(plan.tile_segment.size())) {
        const std::size_t seg_bytes = plan.segments.size() * sizeof(Segment);
        std::vector<char> host(seg_bytes + plan.tile_segment.size() * sizeof(int32_t));
        std::memcpy(host.data(), plan.segments.data(), seg_bytes);
        std::memcpy(host.data() + seg_bytes, plan.tile_segment.data(), host.size() - seg_bytes);
        try {
            check(cudaEventCreateWithFlags(&used_, cudaEventDisableTiming), "cudaEventCreate");
            check(cudaMallocAsync(&memory_, host.size(), stream), "cudaMallocAsync");
            // Pageable source: staged before this returns, so `host` may go.
            check(cudaMemcpyAsync(memory_, host.data(), host.size(), cudaMemcpyHostToDevice,
                                  stream),
                  "cudaMemcpyAsync");
            check(cudaEventRecord(used_, stream), "cudaEventRecord");
        } catch (...) {
            retire(stream);
            throw;
        }
    }
    Table(const Table&) = delete;
    Table& operator=(const Table&) = delete;

    // Frees the table, ordered on `stream` after the last launch that read it; nothing waits
    // here. Errors are ignored: there is nothing to do about them.
    void retire(cudaStream_t stream) noexcept {
        if (memory_ != nullptr) {
            if (used_ != nullptr) cudaStreamWaitEvent(stream, used_, 0);
            cudaFreeAsync(memory_, stream);
        }
        if (used_ != nullptr) cudaEventDestroy(used_);  // released once it has completed
        memory_ = nullptr;
        used_ = nullptr;
    }

    const std::vector<uint64_t>& key() const { return key_; }
    int64_t tiles() const { return tiles_; }
    const Segment* segments() const { return static_cast<const Segment*>(memory_); }
    const int32_t* tile_segment(std::size_t n_segments) const {
        return reinterpret_cast<const int32_t*>(segments() + n_segments);
    }
    cudaEvent_t used() const { return used_; }

   private:
    std::vector<uint64_t> key_;
    int64_t tiles_;
    void* memory_ = nullptr;
    cudaEvent_t used_ = nullptr;
};

// The last tables used on each device, most recent first. Callers hold mutex().
class Tables {
   public:
    static constexpr std::size_t kKeep = 64;  // per device: a few hundred KiB for large models

    // The table for key on the current device: a kept one, or one built by make() and uploaded
    // on stream (which then also frees the table it evicts).
    template <class MakePlan>
    Table& find(int device, const std::vector<uint64_t>& key, MakePlan make, cudaStream_t stream) {
        auto& kept = kept_[device];
        for (auto it = kept.begin(); it != kept.end(); ++it) {
            if ((*it)->key() == key) {
                kept.splice(kept.begin(), kept, it);
                return *kept.front();
            }
        }
        kept.push_front(std::make_unique<Table>(key, make(), stream));
        if (kept.size() > kKeep) {
            kept.back()->retire(stream);
            kept.pop_back();
        }
        return *kept.front();
    }

    std::mutex& mutex() { return mutex_; }

   private:
    std::map<int, std::list<std::unique_ptr<Table>>> kept_;
    std::mutex mutex_;
};

// Never destroyed: the tables still kept at exit are left to the driver's cleanup.
Tables& tables() {
    static auto* t = new Tables;
    return *t;
}

template <class S, class D, class C>
void launch(const Table& t, std::size_t n_segments, double scale, bool scaled,
            cudaStream_t stream) {
    const auto blocks = static_cast<unsigned>(std::min<int64_t>(t.tiles(), INT_MAX));
    copy_kernel<S, D, C><<<blocks, kThreads, 0, stream>>>(
        t.segments(), t.tile_segment(n_segments), t.tiles(), static_cast<C>(scale), scaled);
}

void dispatch(Type from, Type to, const Table& t, std::size_t n, double scale, bool scaled,
              cudaStream_t stream) {
    using T = Type;
    if (from == to) {
        switch (from) {
            case T::bytes: return launch<uint8_t, uint8_t, uint8_t>(t, n, scale, scaled, stream);
            case T::f16: return launch<F16, F16, float>(t, n, scale, scaled, stream);
            case T::bf16: return launch<BF16, BF16, float>(t, n, scale, scaled, stream);
            case T::f32: return launch<float, float, float>(t, n, scale, scaled, stream);
            case T::f64: return launch<double, double, double>(t, n, scale, scaled, stream);
        }
    }
    const auto is = [&](T a, T b) { return from == a && to == b; };
    if (is(T::f32, T::f16)) return launch<float, F16, float>(t, n, scale, scaled, stream);
    if (is(T::f16, T::f32)) return launch<F16, float, float>(t, n, scale, scaled, stream);
    if (is(T::f32, T::bf16)) return launch<float, BF16, float>(t, n, scale, scaled, stream);
    if (is(T::bf16, T::f32)) return launch<BF16, float, float>(t, n, scale, scaled, stream);
    if (is(T::f64, T::f32)) return launch<double, float, double>(t, n, scale, scaled, stream);
    if (is(T::f32, T::f64)) return launch<float, double, double>(t, n, scale, scaled, stream);
}

// The scale rounded to the wider type of the pair, as NumPy rounds a Python float operand:
// directly to float16; to float for bfloat16 (NumPy with ml_dtypes multiplies bfloat16 by a
// Python float in float32).
double wide_scale(double scale, Type from, Type to) {
    switch (size_of(from) >= size_of(to) ? from : to) {
        case Type::f16: return half_to_float(double_to_half(scale));
        case Type::bf16:
        case Type::f32: return static_cast<float>(scale);
        default: return scale;
    }
}

void run(Direction dir, const std::vector<Piece>& pieces, const char* flat, Type from, Type to,
         std::optional<double> scale, Launch where) {
    if (!cast_supported(from, to) || (scale && from == Type::bytes)) {
        throw std::invalid_argument(std::string("unsupported copy ") + name(from) + " -> " +
                                    name(to) + (scale ? " with a scale" : ""));
    }
    // What the table depends on; pieces of zero elements take no part.
    std::vector<uint64_t> key{static_cast<uint64_t>(dir), static_cast<uint64_t>(from),
                              static_cast<uint64_t>(to), static_cast<uint64_t>(where.device),
                              reinterpret_cast<uintptr_t>(flat)};
    key.reserve(key.size() + 2 * pieces.size());
    std::size_t n_segments = 0;
    for (const Piece& p : pieces) {
        if (p.count == 0) continue;
        key.push_back(reinterpret_cast<uintptr_t>(p.data));
        key.push_back(static_cast<uint64_t>(p.count));
        ++n_segments;
    }
    if (n_segments == 0) return;  // nothing to copy

    const double s = scale ? wide_scale(*scale, from, to) : 1.0;
    const auto stream = reinterpret_cast<cudaStream_t>(where.stream);
    DeviceGuard guard(where.device);
    Tables& kept = tables();
    std::lock_guard<std::mutex> lock(kept.mutex());
    Table& table = kept.find(
        where.device, key, [&] { return make_plan(dir, pieces, flat, from, to); }, stream);
    check(cudaStreamWaitEvent(stream, table.used(), 0), "cudaStreamWaitEvent");
    dispatch(from, to, table, n_segments, s, scale.has_value(), stream);
    check(cudaGetLastError(), "the kernel launch");
    check(cudaEventRecord(table.used(), stream), "cudaEventRecord");
}

}  // namespace

void flatten(const std::vector<Piece>& pieces, Type from, void* flat, Type to,
             std::optional<double> scale, Launch where) {
    run(Direction::flatten, pieces, static_cast<const char*>(flat), from, to, scale, where);
}

void unflatten(const void* flat, Type from, const std::vector<Piece>& pieces, Type to,
               std::optional<double> scale, Launch where) {
    run(Direction::unflatten, pieces, static_cast<const char*>(flat), from, to, scale, where);
}

}  // namespace pycoll::cuda
