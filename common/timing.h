// timing.h: device-event timing of batches of launches and of CUDA-graph replays.
// A microsecond kernel is never timed alone: `iters` launches sit between two events
// and the per-launch time is the batch over iters (principle 6).
#pragma once
#include <cstdlib>
#include <cstring>
#include <vector>
#include "check.h"

struct TimingPlan {
  int warmup = 10;  // launches before the first timed batch
  int reps = 5;     // timed batches
  int iters = 20;   // launches per batch
};

class EventPair {
 public:
  EventPair() { CHECK_CUDA(cudaEventCreate(&a_)); CHECK_CUDA(cudaEventCreate(&b_)); }
  ~EventPair() { (void)cudaEventDestroy(a_); (void)cudaEventDestroy(b_); }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  void start(cudaStream_t s) { CHECK_CUDA(cudaEventRecord(a_, s)); }
  float stop_ms(cudaStream_t s) {
    CHECK_CUDA(cudaEventRecord(b_, s));
    CHECK_CUDA(cudaEventSynchronize(b_));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, a_, b_));
    return ms;
  }

 private:
  cudaEvent_t a_, b_;
};

// Under a sanitizer (SUITE_SANITIZE set and not "0", as scripts/sanitize.sh does) a timing means
// nothing: every plan shrinks to one batch of one launch, so the tools still see every kernel
// (validation runs unchanged) without minutes of instrumented repeats.
inline bool sanitizing() {
  const char* e = std::getenv("SUITE_SANITIZE");
  return e && *e && std::strcmp(e, "0") != 0;
}
inline TimingPlan effective_plan(const TimingPlan& p) { return sanitizing() ? TimingPlan{0, 1, 1} : p; }

// enqueue(i) issues the i-th launch on stream s. Returns ms per launch, one per batch.
template <class Enqueue>
std::vector<double> time_launches(Enqueue enqueue, const TimingPlan& requested, cudaStream_t s) {
  const TimingPlan plan = effective_plan(requested);
  for (int i = 0; i < plan.warmup; ++i) enqueue(i);
  CHECK_LAUNCH();
  CHECK_CUDA(cudaStreamSynchronize(s));
  EventPair ev;
  std::vector<double> out;
  int k = 0;
  for (int r = 0; r < plan.reps; ++r) {
    ev.start(s);
    for (int i = 0; i < plan.iters; ++i) enqueue(k++);
    out.push_back(ev.stop_ms(s) / plan.iters);
    CHECK_LAUNCH();
  }
  return out;
}

// A captured graph of launches, replayed as one unit.
class Graph {
 public:
  Graph() = default;
  ~Graph() { reset(); }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  // record(s) enqueues the work to capture on stream s (which must not be the legacy stream).
  template <class Record>
  void capture(Record record, cudaStream_t s) {
    reset();
    CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    record(s);
    CHECK_CUDA(cudaStreamEndCapture(s, &graph_));
    CHECK_CUDA(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  void launch(cudaStream_t s) { CHECK_CUDA(cudaGraphLaunch(exec_, s)); }
  void reset() {
    if (exec_) (void)cudaGraphExecDestroy(exec_);
    if (graph_) (void)cudaGraphDestroy(graph_);
    exec_ = nullptr;
    graph_ = nullptr;
  }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// Replays a graph: warm-up replays, then `reps` timed batches of `iters` replays.
// Returns ms per replay, one per batch.
inline std::vector<double> time_graph(Graph& g, const TimingPlan& plan, cudaStream_t s) {
  return time_launches([&](int) { g.launch(s); }, plan, s);
}
