// check.h: every runtime call is checked; a failure names the expression, file and line.
#pragma once
#include <cstdio>
#include <cstdlib>
#include "port.h"
#include "exitcodes.h"

#define CHECK_CUDA(expr)                                                                   \
  do {                                                                                     \
    cudaError_t check_err_ = (expr);                                                       \
    if (check_err_ != cudaSuccess) {                                                       \
      std::fprintf(stderr, "error: %s failed at %s:%d: %s\n", #expr, __FILE__, __LINE__,   \
                   cudaGetErrorString(check_err_));                                        \
      std::exit(kExitFailure);                                                             \
    }                                                                                      \
  } while (0)

// After a launch: a bad configuration shows here, an execution fault at the next sync.
#define CHECK_LAUNCH() CHECK_CUDA(cudaGetLastError())

#define FAIL(...)                                                                          \
  do {                                                                                     \
    std::fprintf(stderr, "error: ");                                                       \
    std::fprintf(stderr, __VA_ARGS__);                                                     \
    std::fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__);                                \
    std::exit(kExitFailure);                                                               \
  } while (0)
