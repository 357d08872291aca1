#!/usr/bin/env python3
"""Where the microseconds of a token go: the budget arithmetic, from measured inputs only.

Inputs (all from one run's results/<gpu>/*.json): the ceiling (GB/s), the best measured
GEMV time per shape (us), the kernel-boundary cost (graph + PDL, us), the best grid-barrier
cost (us) and the best cross-lane reduction latency (us). Pure functions; tests/test_budget.py
checks them on inputs worked by hand.
"""
import json


def gemv_shapes(m):
    """The GEMVs of one layer and the logits, as (name, N, K, count): y[N] = W[N,K] x[K]."""
    q = m["heads"] * m["head_dim"]
    kv = m["kv_heads"] * m["head_dim"]
    h = m["hidden"]
    return [
        ("qkv", q + 2 * kv, h, m["layers"]),
        ("o", h, q, m["layers"]),
        ("gate_up", 2 * m["mlp"], h, m["layers"]),
        ("down", h, m["mlp"], m["layers"]),
        ("logits", m["vocab"], h, 1),
    ]


def weight_bytes(m, bpv=2):
    """Every GEMV weight once per token (embeddings are tied: the logits matrix; norms ignored)."""
    return sum(bpv * n * k * c for _, n, k, c in gemv_shapes(m))


def kv_bytes(m, tokens, bpv=2):
    """K and V for every layer and position: 2 x layers x kv_heads x head_dim x tokens."""
    return 2 * m["layers"] * m["kv_heads"] * m["head_dim"] * tokens * bpv


def budget(m, tokens, ceiling_gbps, gemv_us, boundary_us, barrier_us, reduction_us, bpv=2):
    """Returns a dict of microsecond terms per token.

    gemv_us: {(N, K): measured best us}. Missing shapes are an error: the budget uses
    measured figures only."""
    # 1 GB/s = 1e9 bytes/s = 1e3 bytes/us, so bytes / (GB/s * 1e3) is microseconds.
    wb = weight_bytes(m, bpv)
    kb = kv_bytes(m, tokens, bpv)
    floor_us = (wb + kb) / (ceiling_gbps * 1e3)
    gemv_total = 0.0
    gemv_floor = 0.0
    for name, n, k, c in gemv_shapes(m):
        if (n, k) not in gemv_us:
            raise KeyError(f"no measured GEMV time for {name} {n}x{k}")
        gemv_total += c * gemv_us[(n, k)]
        gemv_floor += c * (bpv * n * k + bpv * k + bpv * n) / (ceiling_gbps * 1e3)
    gemv_ineff = gemv_total - gemv_floor
    boundaries = m["layers"] * m["kernels_per_layer"] + m["kernels_outside_layers"]
    barriers = m["layers"] * m["barriers_per_layer"] + m["barriers_outside_layers"]
    reductions = m["layers"] * m["reductions_per_layer"]
    red_us = reductions * reduction_us
    kpo = floor_us + gemv_ineff + boundaries * boundary_us + red_us
    sk = floor_us + gemv_ineff + barriers * barrier_us + red_us
    return {
        "weight_bytes": wb,
        "kv_bytes": kb,
        "floor_us": floor_us,
        "gemv_measured_us": gemv_total,
        "gemv_inefficiency_us": gemv_ineff,
        "boundaries": boundaries,
        "boundary_us_each": boundary_us,
        "boundaries_us": boundaries * boundary_us,
        "barriers": barriers,
        "barrier_us_each": barrier_us,
        "barriers_us": barriers * barrier_us,
        "reductions": reductions,
        "reductions_us": red_us,
        "predicted_kernel_per_op_us": kpo,
        "predicted_single_kernel_us": sk,
        "tokens_per_s_kernel_per_op": 1e6 / kpo,
        "tokens_per_s_single_kernel": 1e6 / sk,
    }


def load_models(path="models/models.json"):
    with open(path) as f:
        d = json.load(f)
    return d["models"], d["kv_tokens"], d["bytes_per_value"]
