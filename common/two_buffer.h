// two_buffer.h: the two-buffer schedule of a software-pipelined weight stream: item i+1's loads
// are issued before item i is consumed, unrolled by two so the buffers swap roles instead of
// being copied. 02-gemv's pipelined rungs (v4p, v6p) and 02's chain probe (its pipe set) use it.
#pragma once
#include "port.h"

// The caller has loaded item 0 into a; load(i, buf) issues item i's loads into buf, consume(i,
// buf) uses them.
template <class Buf, class Load, class Consume>
__device__ __forceinline__ void two_buffer_stream(int items, Buf& a, Buf& b, Load load, Consume consume) {
#pragma unroll 1
  for (int i = 0; i < items; i += 2) {
    if (i + 1 < items) load(i + 1, b);
    consume(i, a);
    if (i + 1 >= items) break;
    if (i + 2 < items) load(i + 2, a);
    consume(i + 1, b);
  }
}
