// launch_size.h: what a streaming read reaches when it is cut into launches of a given size and
// the launches run back to back in a CUDA graph, as a decode step's kernels do.
//
// The ceiling (01-ceiling) is one launch over 8 GiB: it has no ramp and no kernel boundary. A
// decode GEMV is one launch of 4-70 MB among hundreds. Here launch i of a graph reads chunk
// (i mod chunks) of a buffer of whole chunks, >= 4x the LLC, so every launch reads DRAM. Two modes:
//   graph       ordinary launches: each starts when the previous has finished (the isolated GEMV)
//   graph+PDL   every launch releases the next at its first instruction (programmatic dependent
//               launch) and never waits: a read depends on nothing, so this is what a chain of
//               kernels of that size could reach if its dependency cost nothing (sm_90 only)
// 01-ceiling sweeps the size ("launch size" family); 02-gemv runs it at its 4096x4096 shape beside
// the GEMVs, as the read-only bound of its chained mode.
//
// Kernels: warp chunks (each warp reads chunks of U x 512 contiguous bytes, U loads per lane in
// flight, chunks dealt round-robin over the grid's warps: the memory pattern of 02-gemv's rows in
// flight) and the ceiling's copy-engine ring. Bytes moved per launch: stream_read_bytes(chunk).
#pragma once
#include <algorithm>
#include "ceiling.h"
#include "chain.h"

template <int U, bool kValidate, bool PDL>
__device__ __forceinline__ void read_warp_chunks_body(const vec4u* __restrict__ p, size_t n, unsigned key,
                                                      unsigned* sink, unsigned long long* total) {
  chain_release<PDL>();  // first instruction: the next launch may start now
  constexpr size_t kChunk = static_cast<size_t>(U) * PORT_WARP_SIZE;
  const size_t lane = threadIdx.x % PORT_WARP_SIZE;
  const size_t warp = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / PORT_WARP_SIZE;
  const size_t warps = static_cast<size_t>(gridDim.x) * blockDim.x / PORT_WARP_SIZE;
  const size_t full = n / kChunk;
  unsigned acc = 0;
  unsigned long long acc64 = 0;
  for (size_t c = warp; c < full; c += warps) {
    const vec4u* q = p + c * kChunk + lane;
    vec4u v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = load16<kLoadPlain>(q + u * PORT_WARP_SIZE, 0);  // all U in flight
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (kValidate) acc64 += static_cast<unsigned long long>(v[u].x) + v[u].y + v[u].z + v[u].w;
      else acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
  }
  // The last, partial chunk: the warp after the last full chunk's owner takes it, one guarded
  // load per lane per step.
  if (warp == full % warps)
    for (size_t i = full * kChunk + lane; i < n; i += PORT_WARP_SIZE) {
      const vec4u v = load16<kLoadPlain>(p + i, 0);
      if (kValidate) acc64 += static_cast<unsigned long long>(v.x) + v.y + v.z + v.w;
      else acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
  if (kValidate) atomicAdd(total, acc64);
  else if (acc == key) sink[threadIdx.x] = acc;  // never-taken in practice; the loads must stay
}

#define READ_WARP_CHUNKS(U)                                                                                      \
  extern "C" __global__ void stream_read_warp_chunks_x##U(const vec4u* p, size_t n, unsigned key, unsigned* s) { \
    read_warp_chunks_body<U, false, false>(p, n, key, s, nullptr);                                               \
  }                                                                                                              \
  extern "C" __global__ void stream_read_warp_chunks_x##U##_pdl(const vec4u* p, size_t n, unsigned key,         \
                                                                unsigned* s) {                                   \
    read_warp_chunks_body<U, false, true>(p, n, key, s, nullptr);                                                \
  }                                                                                                              \
  extern "C" __global__ void stream_check_warp_chunks_x##U(const vec4u* p, size_t n, unsigned key, unsigned* s, \
                                                           unsigned long long* t) {                              \
    read_warp_chunks_body<U, true, false>(p, n, key, s, t);                                                      \
  }
READ_WARP_CHUNKS(8)
READ_WARP_CHUNKS(16)
#undef READ_WARP_CHUNKS
#if !defined(PORT_HIP)
// The ceiling's copy-engine ring, releasing the next launch first.
extern "C" __global__ void stream_read_bulk_pdl(const vec4u* p, size_t n, unsigned key, unsigned* s) {
  chain_release<true>();
  stream_bulk_body<false>(p, n, key, s, nullptr);
}
#endif

struct LaunchSizeKernel {
  const char* name;
  int unroll;      // loads per lane per chunk (warp chunks), stages (ring)
  bool ring;       // the copy-engine ring: its unit of work is a 16 KB chunk per block
  int smem_bytes;  // dynamic shared memory per block
  StreamReadFn read, read_pdl;
  StreamCheckFn check;
};

inline const std::vector<LaunchSizeKernel>& launch_size_kernels() {
  static const std::vector<LaunchSizeKernel> k = {
      {"warp chunks x8", 8, false, 0, stream_read_warp_chunks_x8, stream_read_warp_chunks_x8_pdl,
       stream_check_warp_chunks_x8},
      {"warp chunks x16", 16, false, 0, stream_read_warp_chunks_x16, stream_read_warp_chunks_x16_pdl,
       stream_check_warp_chunks_x16},
#if !defined(PORT_HIP)
      {"bulk copy ring", kBulkStages, true, kBulkSmemBytes, stream_read_bulk, stream_read_bulk_pdl, stream_check_bulk},
#endif
  };
  return k;
}

struct LaunchSizeConfig {
  const LaunchSizeKernel* kernel;
  int threads;
  int per_sm;  // resident blocks per SM asked for (capped by the occupancy the kernel allows)
};

// PDL exists on sm_90 CUDA builds only.
inline bool launch_size_pdl_available(const cudaDeviceProp& prop) {
#if defined(PORT_HIP)
  (void)prop;
  return false;
#else
  return prop.major >= 9;
#endif
}

// The configurations both experiments time: each warp-chunk kernel at 256 threads with the most
// blocks per SM its registers allow and with half that (room for the next launch beside it), and
// the ring at one and two blocks of 256 threads per SM (sm_90).
// Without a GPU (--list) the occupancy is a nominal 8.
inline std::vector<LaunchSizeConfig> launch_size_configs(const cudaDeviceProp& prop, bool has_gpu) {
  std::vector<LaunchSizeConfig> out;
  for (const LaunchSizeKernel& k : launch_size_kernels()) {
    if (k.ring && prop.major < 9) continue;
    if (k.ring) {
      for (int m : {1, 2}) out.push_back({&k, 256, m});
      continue;
    }
    int occ = 8;
    if (has_gpu)
      CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, reinterpret_cast<const void*>(k.read), 256, 0));
    if (occ < 1) FAIL("%s: no block of 256 threads fits on an SM", k.name);
    out.push_back({&k, 256, occ});
    if (occ > 1) out.push_back({&k, 256, occ / 2});
  }
  return out;
}

// Blocks for a launch of n vectors: per_sm x SMs, or fewer when the launch has less work than
// that (a block with nothing to read would only add launch cost).
inline int launch_size_blocks(const LaunchSizeConfig& c, size_t n, int sms) {
  const size_t warp_chunk = static_cast<size_t>(c.kernel->unroll) * PORT_WARP_SIZE, wpb = c.threads / PORT_WARP_SIZE;
  const size_t units = c.kernel->ring ? (n + kBulkChunkVec - 1) / kBulkChunkVec
                                      : ((n + warp_chunk - 1) / warp_chunk + wpb - 1) / wpb;  // warp chunks -> blocks
  return static_cast<int>(std::max<size_t>(1, std::min<size_t>(units, static_cast<size_t>(c.per_sm) * sms)));
}

// The configurations that differ at a launch of n vectors: two per-SM counts of one kernel that
// both cap at the launch's work give one grid, timed once (01's tables listed such rows twice).
inline std::vector<LaunchSizeConfig> launch_size_distinct(const std::vector<LaunchSizeConfig>& all, size_t n, int sms) {
  std::vector<LaunchSizeConfig> out;
  for (const LaunchSizeConfig& c : all) {
    bool seen = false;
    for (const LaunchSizeConfig& o : out)
      seen = seen || (o.kernel == c.kernel && o.threads == c.threads &&
                      launch_size_blocks(o, n, sms) == launch_size_blocks(c, n, sms));
    if (!seen) out.push_back(c);
  }
  return out;
}

inline std::string describe(const LaunchSizeConfig& c, int blocks) {
  char b[128];
  std::snprintf(b, sizeof b, "%s, %d blocks x %d threads", c.kernel->name, blocks, c.threads);
  return b;
}

// One buffer of whole chunks, read one chunk per launch.
class LaunchSizeBench {
 public:
  LaunchSizeBench(StreamBuffer& buf, int sms, size_t llc_bytes) : buf_(buf), sms_(sms), llc_(llc_bytes) {}

  // Chunks of chunk_vec vectors the buffer holds; refused (exit 1) when their rotation would fit
  // in 4x the LLC, since launches would then read the cache, not DRAM.
  size_t chunks(size_t chunk_vec) const {
    const size_t c = buf_.n() / chunk_vec;
    if (c < 1 || stream_read_bytes(c * chunk_vec) < 4.0 * static_cast<double>(llc_))
      FAIL("launch size %.1f MB: %zu chunk(s) of the %.2f GB buffer are under 4x the %.1f MB LLC", stream_read_bytes(chunk_vec) / 1e6,
           c, stream_read_bytes(buf_.n()) / 1e9, llc_ / 1e6);
    return c;
  }

  // Correct before timed: the configuration's check kernel, at this launch's grid, over a chunk
  // away from the buffer's start (the second), at most 4M + 12345 vectors of it (an odd length,
  // so the partial chunk runs), sums to the host's exact total.
  bool validate(const LaunchSizeConfig& c, size_t chunk_vec, cudaStream_t s) {
    prepare(c);
    const size_t first = chunks(chunk_vec) > 1 ? chunk_vec : 0;
    const size_t count = std::min<size_t>(chunk_vec, (size_t(1) << 22) + 12345);
    const int blocks = launch_size_blocks(c, count, sms_);
    return buf_.validate_range(c.kernel->check, blocks, c.threads, c.kernel->smem_bytes, first, count,
                               describe(c, blocks), s);
  }

  // A graph of `launches` launches, launch i reading chunk i mod chunks: ms per launch, one per batch.
  std::vector<double> time(const LaunchSizeConfig& c, size_t chunk_vec, int launches, bool pdl, const TimingPlan& plan,
                           cudaStream_t s) {
    prepare(c);
    const size_t nchunks = chunks(chunk_vec);
    const int blocks = launch_size_blocks(c, chunk_vec, sms_);
    const unsigned key = 0x9e3779b9u;  // runtime value; the branch it guards is practically never taken
    Graph g;
    g.capture(
        [&](cudaStream_t cs) {
          for (int i = 0; i < launches; ++i)
            chain_launch(pdl, pdl ? c.kernel->read_pdl : c.kernel->read, blocks, c.threads, c.kernel->smem_bytes, cs,
                         buf_.data() + (i % nchunks) * chunk_vec, chunk_vec, key, buf_.sink());
        },
        s);
    std::vector<double> ms = time_graph(g, plan, s);
    for (double& m : ms) m /= launches;
    return ms;
  }

 private:
  static void prepare(const LaunchSizeConfig& c) {
    for (StreamReadFn f : {c.kernel->read, c.kernel->read_pdl}) allow_dynamic_smem(f, c.kernel->smem_bytes);
    allow_dynamic_smem(c.kernel->check, c.kernel->smem_bytes);
  }
  StreamBuffer& buf_;
  int sms_;
  size_t llc_;
};
