#!/usr/bin/env python3
"""make compare A=results/h200 B=results/<other>: headline figures side by side, with ratios.

Every numeric summary key present in both devices' NN-name.json (and report.json) is listed
with B/A. Keys present on one side only are listed with '-' on the other.

Where both sides hold 02-gemv.json, a table gives per shape and mode the fastest configuration
on each card, timed on both, as time beyond each card's floor. Where both hold 06-decode.json,
a table puts each decode engine and ring mode that both ran beside itself as time beyond the floor (median - floor, the floor being that card's
bytes over its own measured ceiling): the part of a step that bandwidth does not explain. Where
that part is the same on both cards it is latency (barriers, skew, the attention, prologues),
which a faster memory does not shrink, and the table's last columns use it as a prediction: B's
time = B's floor + A's time beyond A's floor.
"""
import json
import os
import sys


def load_docs(d):
    """{file name: document} of every JSON file in a results directory but env.json, each read once."""
    docs = {}
    for name in sorted(os.listdir(d)):
        if name.endswith(".json") and name != "env.json":
            try:
                docs[name] = json.load(open(os.path.join(d, name)))
            except (OSError, ValueError) as e:
                print(f"compare: cannot read {d}/{name}: {e}", file=sys.stderr)
    return docs


def summaries(docs):
    out = {}
    for name, doc in docs.items():
        for k, v in (doc.get("summary") or {}).items():
            out[(doc.get("experiment", name[:-5]), k)] = v
    return out


def fmt(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return "-" if v is None else str(v)[:40]
    return f"{v:.4g}"


def device(d, docs):
    try:
        return docs["01-ceiling.json"]["provenance"]["device_name"]
    except (KeyError, TypeError):
        return os.path.basename(os.path.normpath(d))


def beyond_floor(doc):
    """{(model, engine or ring mode): (median us, floor us)} of one 06-decode.json document: its
    engines and its ring modes (floor = median x fraction_of_floor, as the binary computed it)."""
    out = {}
    for r in doc.get("rows") or []:
        fam = r.get("family", "")
        if fam.startswith("engines:"):
            name = r.get("engine")
            # the setting each card kept goes with the name, so that only like is paired with like
            if r.get("ring_mode"):
                name = f"{name} [{r['ring_mode']}]"
            if isinstance(r.get("prefetch_bytes_per_block"), (int, float)):
                name = f"{name} [prefetch {int(r['prefetch_bytes_per_block']) // 1024} KB]"
        elif fam.startswith("persistent_ring: piece assignment"):
            name = "ring " + str(r.get("mode"))
        else:
            continue
        med, frac = r.get("median_us"), r.get("fraction_of_floor")
        if name is None or not isinstance(med, (int, float)) or not isinstance(frac, (int, float)) or frac <= 0:
            continue
        out[(r.get("model"), name)] = (float(med), float(med) * float(frac))
    return out


def beyond_floor_table(doc_a, doc_b):
    """Rows (model, name, a_us, a_floor, a_beyond, b_us, b_floor, b_beyond, b_pred, pred_err) for
    every (model, name) both documents hold, in A's order. b_pred = b_floor + a_beyond."""
    fa, fb = beyond_floor(doc_a), beyond_floor(doc_b)
    rows = []
    for key, (ma, fla) in fa.items():
        if key not in fb:
            continue
        mb, flb = fb[key]
        pred = flb + (ma - fla)
        rows.append((key[0], key[1], ma, fla, ma - fla, mb, flb, mb - flb, pred, (mb - pred) / pred))
    return rows


def gemv_beyond(doc):
    """{(shape, mode, configuration): (median us, floor us)} of one 02-gemv.json document: every
    validated configuration, isolated or chained (floor = median x mbu: bytes over that run's
    ceiling)."""
    out = {}
    for r in doc.get("rows") or []:
        if not str(r.get("family", "")).startswith("every configuration") or r.get("mode") not in ("isolated", "chained"):
            continue
        med, mbu = r.get("median_us"), r.get("mbu")
        if not isinstance(med, (int, float)) or not isinstance(mbu, (int, float)) or mbu <= 0:
            continue
        conf = f"{r.get('version')} {r.get('variant')} {r.get('grid')} x {r.get('threads')}".replace(" - x -", "")
        out[(r.get("shape"), r.get("mode"), conf)] = (float(med), float(med) * float(mbu))
    return out


def gemv_best_table(doc_a, doc_b):
    """Rows (shape, mode, configuration, best_on, a_us, a_beyond, b_us, b_beyond): per shape and
    mode, the fastest configuration on A and the fastest on B (one row if they are the same),
    each timed on both cards."""
    fa, fb = gemv_beyond(doc_a), gemv_beyond(doc_b)
    common = [k for k in fa if k in fb]
    rows = []
    for sm in dict.fromkeys((k[0], k[1]) for k in common):
        ks = [k for k in common if (k[0], k[1]) == sm]
        best_a, best_b = min(ks, key=lambda k: fa[k][0]), min(ks, key=lambda k: fb[k][0])
        for k, who in ([(best_a, "both")] if best_a == best_b else [(best_a, "A"), (best_b, "B")]):
            (ma, fla), (mb, flb) = fa[k], fb[k]
            rows.append((k[0], k[1], k[2], who, ma, ma - fla, mb, mb - flb))
    return rows


def main():
    if len(sys.argv) != 3 or not all(os.path.isdir(x) for x in sys.argv[1:]):
        print("usage: compare.py RESULTS_DIR_A RESULTS_DIR_B (make compare A=results/h200 B=results/other)", file=sys.stderr)
        return 2
    a, b = sys.argv[1], sys.argv[2]
    docs_a, docs_b = load_docs(a), load_docs(b)
    sa, sb = summaries(docs_a), summaries(docs_b)
    print(f"| experiment | key | A: {device(a, docs_a)} | B: {device(b, docs_b)} | B / A |")
    print("|---|---|---|---|---|")
    for key in sorted(set(sa) | set(sb)):
        va, vb = sa.get(key), sb.get(key)
        ratio = "-"
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (va, vb)) and va:
            ratio = f"{vb / va:.3f}"
        if isinstance(va, dict) or isinstance(vb, dict):
            continue
        print(f"| {key[0]} | {key[1]} | {fmt(va)} | {fmt(vb)} | {ratio} |")
    ga, gb = docs_a.get("02-gemv.json"), docs_b.get("02-gemv.json")
    print_table("02-gemv: per shape and mode, the fastest configuration on each card, timed on both, "
                "as time beyond each card's floor (median - bytes / its ceiling)",
                ["shape", "mode", "configuration", "fastest on", "A µs", "A beyond µs", "B µs", "B beyond µs",
                 "B beyond - A beyond µs"],
                [[shape, mode, conf, who, f"{ma:.2f}", f"{ba:.2f}", f"{mb:.2f}", f"{bb:.2f}", f"{bb - ba:+.2f}"]
                 for shape, mode, conf, who, ma, ba, mb, bb in (gemv_best_table(ga, gb) if ga and gb else [])])
    da, db = docs_a.get("06-decode.json"), docs_b.get("06-decode.json")
    print_table("06-decode: time beyond the floor (median - floor, each card's floor from its own ceiling), "
                "and B predicted as B's floor + A's time beyond A's floor",
                ["model", "engine", "A µs", "A floor µs", "A beyond µs", "B µs", "B floor µs", "B beyond µs",
                 "B beyond - A beyond µs", "B predicted µs", "B vs predicted"],
                [[m, n, f"{ma:.1f}", f"{fla:.1f}", f"{ba:.1f}", f"{mb:.1f}", f"{flb:.1f}", f"{bb:.1f}", f"{bb - ba:+.1f}",
                  f"{pred:.1f}", f"{100 * err:+.1f}%"]
                 for m, n, ma, fla, ba, mb, flb, bb, pred, err in (beyond_floor_table(da, db) if da and db else [])])
    return 0


def print_table(title, header, rows):
    """A titled markdown table, or nothing where there are no rows."""
    if not rows:
        return
    print(f"\n{title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |")


if __name__ == "__main__":
    sys.exit(main())
