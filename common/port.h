// port.h: the one place where CUDA spelling meets HIP.
// Kernels are written in CUDA spelling; on HIP this header maps the names.
// Never define __CUDA_ARCH__ here. Warp width is PORT_WARP_SIZE in device code
// and the device's own warpSize on the host (checked to agree at start-up).
#pragma once

#if defined(__HIPCC__) || defined(__HIP__)
#define PORT_HIP 1
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#define cudaError_t hipError_t
#define cudaSuccess hipSuccess
#define cudaErrorNoDevice hipErrorNoDevice
#define cudaErrorInsufficientDriver hipErrorInsufficientDriver
#define cudaGetErrorString hipGetErrorString
#define cudaGetErrorName hipGetErrorName
#define cudaGetLastError hipGetLastError
#define cudaPeekAtLastError hipPeekAtLastError
#define cudaMalloc hipMalloc
#define cudaFree hipFree
#define cudaMallocHost hipHostMalloc
#define cudaFreeHost hipHostFree
#define cudaMemcpy hipMemcpy
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaMemset hipMemset
#define cudaMemsetAsync hipMemsetAsync
#define cudaMemGetInfo hipMemGetInfo
#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaSetDevice hipSetDevice
#define cudaGetDevice hipGetDevice
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaGetDeviceProperties hipGetDeviceProperties
#define cudaDeviceProp hipDeviceProp_t
#define cudaDeviceGetAttribute hipDeviceGetAttribute
#define cudaDevAttrClockRate hipDeviceAttributeClockRate
#define cudaDevAttrMemoryClockRate hipDeviceAttributeMemoryClockRate
#define cudaDevAttrGlobalMemoryBusWidth hipDeviceAttributeMemoryBusWidth
#define cudaDevAttrCooperativeLaunch hipDeviceAttributeCooperativeLaunch
#define cudaDriverGetVersion hipDriverGetVersion
#define cudaRuntimeGetVersion hipRuntimeGetVersion
#define cudaEvent_t hipEvent_t
#define cudaEventCreate hipEventCreate
#define cudaEventRecord hipEventRecord
#define cudaEventSynchronize hipEventSynchronize
#define cudaEventElapsedTime hipEventElapsedTime
#define cudaEventDestroy hipEventDestroy
#define cudaStream_t hipStream_t
#define cudaStreamCreate hipStreamCreate
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamNonBlocking hipStreamNonBlocking
#define cudaStreamDestroy hipStreamDestroy
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaStreamBeginCapture hipStreamBeginCapture
#define cudaStreamEndCapture hipStreamEndCapture
#define cudaStreamCaptureModeGlobal hipStreamCaptureModeGlobal
#define cudaStreamCaptureModeThreadLocal hipStreamCaptureModeThreadLocal
#define cudaGraph_t hipGraph_t
#define cudaGraphExec_t hipGraphExec_t
#define cudaGraphInstantiate(e, g, f) hipGraphInstantiate(e, g, nullptr, nullptr, 0)
#define cudaGraphLaunch hipGraphLaunch
#define cudaGraphExecDestroy hipGraphExecDestroy
#define cudaGraphDestroy hipGraphDestroy
#define cudaFuncSetAttribute hipFuncSetAttribute
#define cudaFuncAttributeMaxDynamicSharedMemorySize hipFuncAttributeMaxDynamicSharedMemorySize
#define cudaOccupancyMaxActiveBlocksPerMultiprocessor hipOccupancyMaxActiveBlocksPerMultiprocessor
#define cudaLaunchCooperativeKernel hipLaunchCooperativeKernel
#define __shfl_xor_sync(mask, v, m) __shfl_xor(v, m)
#define __shfl_down_sync(mask, v, d) __shfl_down(v, d)
#define __shfl_sync(mask, v, l) __shfl(v, l)
#else
#define PORT_CUDA 1
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#endif

// Device-side warp (wave) width: from the compiler for AMD, the architecture's
// fixed width for NVIDIA. Host code uses cudaDeviceProp::warpSize instead.
#if defined(PORT_HIP)
#if defined(__AMDGCN_WAVEFRONT_SIZE__)
#define PORT_WARP_SIZE __AMDGCN_WAVEFRONT_SIZE__
#else
#define PORT_WARP_SIZE 64
#endif
#else
#define PORT_WARP_SIZE 32
#endif

// Host side: the width this build's kernels were compiled for (checked against
// cudaDeviceProp::warpSize at start-up).
#if defined(PORT_HIP)
#define PORT_HOST_WARP_SIZE 64
#else
#define PORT_HOST_WARP_SIZE 32
#endif

#define PORT_FULL_MASK 0xffffffffu

// 16 bytes as four 32-bit words, what every streaming load returns (stream_read.h, chain.h).
#if defined(PORT_HIP)
typedef unsigned int vec4u __attribute__((ext_vector_type(4)));  // native vector: the nt builtin needs one
#else
typedef uint4 vec4u;
#endif

// Two named clocks. The cycle counter counts this SM's (CU's) cycles; the
// constant-rate clock ticks at a rate that is calibrated at start-up, never assumed.
__device__ __forceinline__ unsigned long long port_cycle_clock() {
#if defined(PORT_HIP)
  return __builtin_amdgcn_s_memtime();
#else
  return clock64();
#endif
}
__device__ __forceinline__ unsigned long long port_const_clock() {
#if defined(PORT_HIP)
  return __builtin_amdgcn_s_memrealtime();
#else
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#endif
}
