#!/usr/bin/env python3
"""make run's report: results/<gpu>/report.md + report.json + env.json + plots, from this
run's JSON only. Plots need matplotlib; without it every table is still written and the
report says which plots were skipped.

usage: report.py RESULTS_DIR
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import budget  # noqa: E402

EXPERIMENTS = ["01-ceiling", "02-gemv", "03-dlops", "04-reduce", "05-sync"]


def load(d, name):
    p = os.path.join(d, name + ".json")
    return json.load(open(p)) if os.path.exists(p) else None


def rows(doc, family_prefix=None):
    if not doc:
        return []
    return [r for r in doc.get("rows", []) if family_prefix is None or str(r.get("family", "")).startswith(family_prefix)]


def time_key(r):
    for k in ("median_us", "us", "time_us", "us_per_gemv"):
        if isinstance(r.get(k), (int, float)):
            return r[k]
    return None


def gemv_best_by_shape(doc):
    """Best measured isolated time per (N, K) over every version (hand-written and vendor)."""
    best = {}
    for r in rows(doc):
        n, k, t = r.get("n"), r.get("k"), time_key(r)
        if not isinstance(n, int) or not isinstance(k, int) or t is None:
            continue
        if str(r.get("mode", "isolated")) != "isolated":
            continue
        if r.get("validated") is False:
            continue
        best[(n, k)] = min(best.get((n, k), float("inf")), t)
    return best


def plots(d, docs):
    made, skipped = [], []
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # noqa: BLE001
        return made, [f"all plots (matplotlib not available: {e})"]

    def save(fig, name):
        fig.tight_layout()
        fig.savefig(os.path.join(d, name), dpi=110)
        plt.close(fig)
        made.append(name)

    c = docs.get("01-ceiling")
    rs = rows(c, "grid x load flavour")
    if rs:
        fig, ax = plt.subplots(figsize=(7, 4))
        for fl in sorted({r["loads"] for r in rs}):
            pts = sorted((r["blocks"], r["gbps"]) for r in rs if r["loads"] == fl)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=fl)
        ax.axhline(c["summary"]["spec_gbps"], color="gray", ls="--", lw=1, label="datasheet")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("blocks (256 threads, 4 loads in flight)")
        ax.set_ylabel("GB/s")
        ax.set_title("01-ceiling: streaming read, 8 GiB")
        ax.legend(fontsize=7)
        save(fig, "01-ceiling-grid.png")
    else:
        skipped.append("01-ceiling-grid.png (no 01-ceiling rows)")

    g = docs.get("02-gemv")
    # Square shapes (the N = K size sweep), isolated, the best grid per version and size.
    rs = [r for r in rows(g) if isinstance(r.get("bytes"), (int, float)) and isinstance(r.get("mbu"), (int, float))
          and r.get("n") == r.get("k") and str(r.get("mode", "isolated")) == "isolated"]
    if rs:
        fig, ax = plt.subplots(figsize=(7, 4))
        for v in sorted({str(r.get("version")) for r in rs}):
            best = {}
            for r in rs:
                if str(r.get("version")) == v:
                    best[r["bytes"]] = max(best.get(r["bytes"], 0), r["mbu"])
            pts = sorted(best.items())
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=v)
        ax.set_xscale("log")
        ax.set_xlabel("bytes per GEMV")
        ax.set_ylabel("MBU (of the measured ceiling)")
        ax.set_title("02-gemv: size sweep N = K")
        ax.legend(fontsize=6)
        save(fig, "02-gemv-sweep.png")
    else:
        skipped.append("02-gemv-sweep.png (no size-sweep rows with bytes and mbu)")

    s = docs.get("05-sync")
    rs = [r for r in rows(s) if isinstance(r.get("blocks"), int) and isinstance(r.get("bare_median_us"), (int, float))
          and r.get("threads") == 256 and r.get("scheme") is not None]
    if rs:
        fig, ax = plt.subplots(figsize=(7, 4))
        for b in sorted({str(r["scheme"]) for r in rs}):
            pts = sorted({r["blocks"]: r["bare_median_us"] for r in rs if str(r["scheme"]) == b}.items())
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=b)
        ax.set_xlabel("blocks (256 threads)")
        ax.set_ylabel("µs per barrier")
        ax.set_title("05-sync: barrier cost against blocks")
        ax.legend(fontsize=6)
        save(fig, "05-sync-blocks.png")
    else:
        skipped.append("05-sync-blocks.png (no barrier rows with blocks and a time)")

    dl = docs.get("03-dlops")
    rs = [r for r in rows(dl) if r.get("chain") is not None and isinstance(r.get("cycles_per_instruction"), (int, float))
          and r.get("warps", 1) == 1]
    if rs:
        seen = {}
        for r in rs:
            seen.setdefault(str(r["chain"]), r["cycles_per_instruction"])
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.barh(list(seen.keys()), list(seen.values()))
        ax.set_xlabel("cycles per instruction (one warp)")
        ax.set_title("03-dlops: dependent chains")
        save(fig, "03-dlops-chains.png")
    else:
        skipped.append("03-dlops-chains.png (no chain rows)")
    return made, skipped


def held_against_decode(dec, models, predicted):
    """The predictions next to 06-decode's measured step, when this directory holds a 06 run
    (make run writes the report once before 06, which reads its prediction, and once after)."""
    if not dec:
        return []
    sm = dec.get("summary", {})
    rows_ = []
    for m in models:
        k = m["key"]
        if not isinstance(sm.get(f"{k}_persistent_us"), (int, float)) or not isinstance(sm.get(f"{k}_predicted_us"), (int, float)):
            continue
        kpo = sm.get(f"{k}_graph_pdl_us")
        rows_.append(f"| {m['name']} | {predicted.get(f'{k}_predicted_kernel_per_op_us', float('nan')):.1f} | "
                   f"{kpo if isinstance(kpo, (int, float)) else float('nan'):.1f} | {sm[f'{k}_predicted_us']:.1f} | "
                   f"{sm[f'{k}_persistent_us']:.1f} ({sm.get(f'{k}_persistent_engine', '?')}) | "
                   f"{100 * sm.get(f'{k}_prediction_error', float('nan')):+.1f}% | "
                   f"{sm.get(f'{k}_persistent_fraction_of_floor', float('nan')):.3f} |")
    if not rows_:
        return []
    return ["### Held against 06-decode (measured in the same run)", "",
            "| model | predicted kernel per op µs | measured graph + PDL µs | predicted single kernel µs | "
            "measured persistent µs (engine) | prediction error | floor / persistent |",
            "|---|---|---|---|---|---|---|"] + rows_ + ["", "Prediction error = measured persistent / predicted single kernel − 1 (06-decode's "
                  "`<model>_prediction_error`); the kernel-per-op prediction is this report's, next to 06's "
                  "graph + PDL engine.", ""]


def mixed_inputs(docs):
    """The inputs' runs, where they differ: one line per provenance field (commit, dirty flag,
    card) that is not the same in every input JSON that recorded it; [] for one run's files.
    A report adds what each file measured, so files of two runs (or two cards) must say so."""
    lines = []
    for key, what in (("git_commit", "commit"), ("git_dirty", "dirty tree"), ("device_uuid", "card")):
        seen = {e: doc["provenance"].get(key) for e, doc in docs.items()
                if doc and doc.get("provenance", {}).get(key) not in (None, "", "unavailable")}
        if len(set(map(str, seen.values()))) > 1:
            lines.append(f"{what}: " + ", ".join(f"{e} {v}" for e, v in seen.items()))
    return lines


def main():
    d = sys.argv[1]
    docs = {e: load(d, e) for e in EXPERIMENTS}
    present = [e for e in EXPERIMENTS if docs[e]]
    first = docs[present[0]] if present else None
    env = {"provenance": first["provenance"] if first else None,
           "clocks": {e: {"start": docs[e]["provenance"].get("clocks_at_start"),
                          "end": docs[e]["provenance"].get("clocks_at_end")} for e in present}}
    json.dump(env, open(os.path.join(d, "env.json"), "w"), indent=2)

    out = [f"# Report: {first['provenance']['device_name'] if first else 'no results'}", ""]
    if first:
        p = first["provenance"]
        out += ["| | |", "|---|---|",
                f"| device | {p['device_name']} ({p['arch']}), {p['sm_count']} SMs, {p['l2_bytes'] / 1e6:.1f} MB L2 |",
                f"| driver / runtime | {p['driver_version']} / {p['runtime_version']} |",
                f"| power limit / ECC | {p['power_limit_w']} W / {p['ecc']} |",
                f"| commit | {p['git_commit']}{' (dirty)' if p['git_dirty'] else ''} |",
                f"| started | {p['utc_start']} |", ""]
    mixed = mixed_inputs({e: docs[e] for e in present})
    if mixed:
        out += ["**These inputs are not all from one run**, so a sum below may add figures of two runs "
                "or two cards: " + "; ".join(mixed) + ".", ""]
        print("report: warning: inputs from more than one run: " + "; ".join(mixed), file=sys.stderr)
    made, skipped = plots(d, docs)

    summary = {}
    c = docs.get("01-ceiling")
    g = docs.get("02-gemv")
    s = docs.get("05-sync")
    r4 = docs.get("04-reduce")
    d3 = docs.get("03-dlops")
    missing = [n for n, x in (("01-ceiling", c), ("02-gemv", g), ("04-reduce", r4), ("05-sync", s)) if not x]
    out += ["## Where the microseconds of a token go", ""]
    if missing:
        out += [f"Not computed: this run has no {', '.join(missing)} result.", ""]
    else:
        ceiling = c["summary"]["ceiling_gbps"]
        gemv = gemv_best_by_shape(g)
        boundary = s["summary"].get("pdl_boundary_us") or s["summary"].get("graph_boundary_us")
        barrier = s["summary"]["best_barrier_us"]
        mhz = (r4["summary"].get("sm_clock_mhz") or (d3 or {}).get("summary", {}).get("sm_clock_mhz") or 1980)
        red_cycles = r4["summary"].get("best_latency_cycles")
        reduction_us = red_cycles / mhz if red_cycles else 0.0
        models, tokens, bpv = budget.load_models()
        out += [f"Inputs from this run: ceiling {ceiling:.0f} GB/s (01-ceiling); best isolated GEMV time per shape "
                f"(02-gemv); kernel boundary {boundary:.2f} µs (05-sync, graph + PDL); best grid barrier "
                f"{barrier:.2f} µs (05-sync, `{s['summary'].get('best_barrier_name')}`); one reduction "
                f"{reduction_us * 1e3:.1f} ns ({red_cycles} cycles at {mhz} MHz, 04-reduce). "
                f"KV cache {tokens} tokens, FP16. Model shapes: `models/models.json`.", ""]
        for m in models:
            try:
                b = budget.budget(m, tokens, ceiling, gemv, boundary, barrier, reduction_us, bpv)
            except KeyError as e:
                out += [f"### {m['name']}", "", f"Not computed: {e}", ""]
                continue
            summary[f"{m['key']}_floor_us"] = b["floor_us"]
            summary[f"{m['key']}_predicted_single_kernel_us"] = b["predicted_single_kernel_us"]
            summary[f"{m['key']}_predicted_kernel_per_op_us"] = b["predicted_kernel_per_op_us"]
            out += [f"### {m['name']}", "",
                    f"Bytes per token: {b['weight_bytes'] / 1e9:.3f} GB of weights + {b['kv_bytes'] / 1e6:.1f} MB of KV cache.", "",
                    "| term | kernel per op (graph + PDL) µs | single kernel µs |", "|---|---|---|",
                    f"| bandwidth floor (bytes / ceiling) | {b['floor_us']:.1f} | {b['floor_us']:.1f} |",
                    f"| GEMV inefficiency (measured − floor) | {b['gemv_inefficiency_us']:.1f} | {b['gemv_inefficiency_us']:.1f} |",
                    f"| boundaries ({b['boundaries']} x {boundary:.2f}) / barriers ({b['barriers']} x {barrier:.2f}) | {b['boundaries_us']:.1f} | {b['barriers_us']:.1f} |",
                    f"| reductions ({b['reductions']}) | {b['reductions_us']:.2f} | {b['reductions_us']:.2f} |",
                    f"| **predicted per token** | **{b['predicted_kernel_per_op_us']:.1f}** | **{b['predicted_single_kernel_us']:.1f}** |",
                    f"| tokens per second | {b['tokens_per_s_kernel_per_op']:.0f} | {b['tokens_per_s_single_kernel']:.0f} |", ""]
        out += ["The rest (attention arithmetic, norms, RoPE, sampling) is counted at its bytes only: the KV "
                "cache is in the floor, and the small vectors are not. A prediction, not a measurement: 06-decode "
                "runs after this report and holds the single-kernel figure against a real decode step "
                "(`<model>_predicted_us` and `<model>_prediction_error` in 06-decode.json; results/06-decode.md).", ""]
        out += held_against_decode(load(d, "06-decode"), models, summary)
    if made:
        out += ["## Plots", ""] + [f"![{m}]({m})" for m in made] + [""]
    if skipped:
        out += ["Plots skipped: " + "; ".join(skipped), ""]
    for e in present:
        txt = os.path.join(d, e + ".txt")
        out += [f"## {e}", ""]
        out += [open(txt).read() if os.path.exists(txt) else "(no table output)", ""]
    open(os.path.join(d, "report.md"), "w").write("\n".join(out))
    # Provenance as every experiment's JSON has it: the first input's, and the commit and start
    # of each input (a report mixes the files present, which one make run writes together).
    inputs = {e: {k: docs[e]["provenance"].get(k) for k in ("git_commit", "git_dirty", "utc_start", "device_name")}
              for e in present}
    json.dump({"schema": 1, "experiment": "report", "provenance": dict(first["provenance"], inputs=inputs) if first else None,
               "summary": summary, "mixed_inputs": mixed, "plots": made, "plots_skipped": skipped},
              open(os.path.join(d, "report.json"), "w"), indent=2)
    print(f"report: wrote {d}/report.md, report.json, env.json; plots: {', '.join(made) or 'none'}", file=sys.stderr)
    for sk in skipped:
        print(f"report: skipped plot: {sk}", file=sys.stderr)


if __name__ == "__main__":
    main()
