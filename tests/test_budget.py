#!/usr/bin/env python3
"""The budget's arithmetic on fixed inputs whose answers are worked by hand below."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import budget  # noqa: E402

fails = 0


def check(name, cond, detail=""):
    global fails
    print(f"{'PASS' if cond else 'FAIL'} budget:{name}" + (f" ({detail})" if detail and not cond else ""))
    fails += not cond


def near(a, b, eps=1e-9):
    return abs(a - b) <= eps * max(1.0, abs(b))


models, tokens, bpv = budget.load_models(os.path.join(os.path.dirname(__file__), "..", "models", "models.json"))
m1 = next(m for m in models if m["key"] == "llama_3_2_1b")
m8 = next(m for m in models if m["key"] == "llama_3_1_8b")

# Llama-3.2-1B shapes by hand: q = 32*64 = 2048, kv = 8*64 = 512 -> qkv N = 3072.
check("1b_shapes", [(n, k) for _, n, k, _ in budget.gemv_shapes(m1)] ==
      [(3072, 2048), (2048, 2048), (16384, 2048), (2048, 8192), (128256, 2048)])
# 8B: q = 32*128 = 4096, kv = 1024 -> 6144; gate+up = 2*14336 = 28672.
check("8b_shapes", [(n, k) for _, n, k, _ in budget.gemv_shapes(m8)] ==
      [(6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336), (128256, 4096)])
# 1B weights: per layer 2*(3072*2048 + 2048*2048 + 16384*2048 + 2048*8192)
#   = 2*(6291456 + 4194304 + 33554432 + 16777216) = 2*60817408 = 121634816 bytes;
#   x16 layers = 1946157056; logits 2*128256*2048 = 525336576; total 2471493632.
check("1b_weight_bytes", budget.weight_bytes(m1) == 2471493632, budget.weight_bytes(m1))
# 1B KV: 2 * 16 layers * 8 heads * 64 dim * 1024 tokens * 2 bytes = 33554432 (32 MiB).
check("1b_kv_bytes", budget.kv_bytes(m1, 1024) == 33554432)
# 8B KV: 2 * 32 * 8 * 128 * 1024 * 2 = 134217728 (128 MiB).
check("8b_kv_bytes", budget.kv_bytes(m8, 1024) == 134217728)

# A toy model worked completely by hand.
toy = {"layers": 2, "hidden": 4, "heads": 2, "kv_heads": 1, "head_dim": 2, "mlp": 8, "vocab": 10,
       "kernels_per_layer": 9, "barriers_per_layer": 7, "kernels_outside_layers": 3,
       "barriers_outside_layers": 2, "reductions_per_layer": 4}
# shapes: qkv (2*2 + 2*1*2 = 8, 4) x2, o (4, 4) x2, gate_up (16, 4) x2, down (4, 8) x2, logits (10, 4) x1
# weight bytes = 2*(32+16+64+32)*2 + 2*40 = 576 + 80 = 656; kv = 2*2*1*2*3 tokens*2 = 48.
check("toy_weight_bytes", budget.weight_bytes(toy) == 656)
check("toy_kv_bytes", budget.kv_bytes(toy, 3) == 48)
# ceiling 1 GB/s = 1000 bytes/us: floor = (656+48)/1000 = 0.704 us.
gemv = {(8, 4): 1.0, (4, 4): 1.0, (16, 4): 1.0, (4, 8): 1.0, (10, 4): 1.0}
b = budget.budget(toy, 3, 1.0, gemv, boundary_us=2.0, barrier_us=0.5, reduction_us=0.25)
check("toy_floor", near(b["floor_us"], 0.704), b["floor_us"])
# measured gemv = 4 shapes x 2 layers x 1 us + 1 us = 9 us.
check("toy_gemv_measured", near(b["gemv_measured_us"], 9.0))
# gemv floor: bytes incl. vectors: qkv 2*(32+4+8)=88, o 2*(16+4+4)=48, gate_up 2*(64+4+16)=168,
#   down 2*(32+8+4)=88 -> per layer 392, x2 = 784; logits 2*(40+4+10) = 108; total 892 -> 0.892 us.
check("toy_gemv_inefficiency", near(b["gemv_inefficiency_us"], 9.0 - 0.892), b["gemv_inefficiency_us"])
# boundaries 2*9+3 = 21 x 2 us = 42; barriers 2*7+2 = 16 x 0.5 = 8; reductions 2*4 = 8 x 0.25 = 2.
check("toy_boundaries", b["boundaries"] == 21 and near(b["boundaries_us"], 42.0))
check("toy_barriers", b["barriers"] == 16 and near(b["barriers_us"], 8.0))
check("toy_reductions", near(b["reductions_us"], 2.0))
# kernel per op: 0.704 + 8.108 + 42 + 2 = 52.812; single kernel: 0.704 + 8.108 + 8 + 2 = 18.812.
check("toy_kernel_per_op", near(b["predicted_kernel_per_op_us"], 52.812), b["predicted_kernel_per_op_us"])
check("toy_single_kernel", near(b["predicted_single_kernel_us"], 18.812), b["predicted_single_kernel_us"])
check("toy_tokens_per_s", near(b["tokens_per_s_single_kernel"], 1e6 / 18.812))
try:
    budget.budget(toy, 3, 1.0, {}, 1, 1, 1)
    check("missing_shape_refused", False)
except KeyError:
    check("missing_shape_refused", True)
# The report's table of predictions against 06-decode's measured step (scripts/report.py).
import report  # noqa: E402
check("held_against_no_decode_run", report.held_against_decode(None, models, {}) == [])
# A report of one run's files says nothing of mixing; of two runs' (or two cards') it names each.
one = {e: {"provenance": {"git_commit": "aaa", "git_dirty": False, "device_uuid": "GPU-1"}} for e in ("01-ceiling", "02-gemv")}
check("mixed_inputs_one_run", report.mixed_inputs(one) == [])
two = dict(one, **{"02-gemv": {"provenance": {"git_commit": "bbb", "git_dirty": False, "device_uuid": "GPU-2"}}})
mixed = report.mixed_inputs(two)
check("mixed_inputs_two_runs", len(mixed) == 2 and mixed[0].startswith("commit:") and "02-gemv bbb" in mixed[0]
      and mixed[1].startswith("card:") and "GPU-2" in mixed[1], mixed)
# an input that recorded no card (older runs) is not counted as another card
old_run = dict(one, **{"02-gemv": {"provenance": {"git_commit": "aaa", "git_dirty": False}}})
check("mixed_inputs_unrecorded_card", report.mixed_inputs(old_run) == [])
dec = {"summary": {"llama_3_2_1b_persistent_us": 900.0, "llama_3_2_1b_predicted_us": 800.0,
                   "llama_3_2_1b_prediction_error": 0.125, "llama_3_2_1b_graph_pdl_us": 950.0,
                   "llama_3_2_1b_persistent_engine": "persistent_ring",
                   "llama_3_2_1b_persistent_fraction_of_floor": 0.6}}
rows_ = report.held_against_decode(dec, models, {"llama_3_2_1b_predicted_kernel_per_op_us": 780.0})
one = [r for r in rows_ if r.startswith("| Llama-3.2-1B")]
check("held_against_row", len(one) == 1 and
      one[0] == "| Llama-3.2-1B | 780.0 | 950.0 | 800.0 | 900.0 (persistent_ring) | +12.5% | 0.600 |", one)
check("held_against_skips_unmeasured_model", not any(r.startswith("| Llama-3.1-8B") for r in rows_))
print(f"budget: {fails} failed")
sys.exit(1 if fails else 0)
