// exitcodes.h: the contract of every experiment binary (DESIGN.md).
#pragma once
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;  // validation or GPU error
constexpr int kExitUsage = 2;    // bad flags or bad input
constexpr int kExitNoGpu = 77;   // no GPU present: skipped
