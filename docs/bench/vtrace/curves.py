"""Summarises the learning curves of `evolve bench -variants fixed` runs:
per config, the mean over generations of the population's mean fitness
(the area under the learning curve, which separates configs that all end at
the ceiling), the same over the second half of the run, and the mean
training return; mean ± std over seeds with every seed. With -plot PNG it
also draws each config's mean fitness against env steps per agent (mean
over seeds, the band one std).

    /usr/bin/python3 docs/bench/vtrace/curves.py BENCH_DIR [-plot out.png] [-title T] [-ymin Y] [-rename CONFIG=LABEL ...]
"""

import argparse
import csv
import glob
import os
import statistics as st


def curves(path):
    """Per generation: steps per agent, mean fitness, mean training return."""
    by = {}
    for r in csv.DictReader(open(path)):
        by.setdefault(int(r["generation"]), []).append(r)
    out = []
    for g in sorted(by):
        rows = by[g]
        tr = [float(r["train_return"]) for r in rows if r["train_return"] not in ("", "NaN")]
        out.append((int(rows[0]["steps"]), st.mean(float(r["fitness"]) for r in rows), st.mean(tr) if tr else float("nan")))
    return out


def summary(xs):
    return f"{st.mean(xs):.1f} ± {st.stdev(xs):.1f} ({', '.join(f'{x:.1f}' for x in xs)})"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("bench")
    p.add_argument("-plot")
    p.add_argument("-title", default="")
    p.add_argument("-ymin", type=float, help="the plot's lowest fitness (the curves are cut there)")
    p.add_argument("-rename", action="append", default=[], metavar="CONFIG=LABEL", help="a config's label in the table and the plot")
    a = p.parse_args()
    labels = dict(r.split("=", 1) for r in a.rename)
    runs = {}
    for cfg in sorted(os.listdir(os.path.join(a.bench, "runs"))):
        paths = sorted(glob.glob(os.path.join(a.bench, "runs", cfg, "fixed", "seed-*", "metrics.csv")))
        if paths:
            runs[labels.get(cfg, cfg)] = [curves(p) for p in paths]
    print("| config | mean fitness over the run | over its second half | mean training return |")
    print("|---|---|---|---|")
    for cfg, cs in runs.items():
        whole = [st.mean(f for _, f, _ in c) for c in cs]
        late = [st.mean(f for _, f, _ in c[len(c) // 2:]) for c in cs]
        train = [st.mean(t for _, _, t in c) for c in cs]
        print(f"| {cfg} | {summary(whole)} | {summary(late)} | {summary(train)} |")
    if a.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(8, 5))
        for cfg, cs in runs.items():
            n = min(len(c) for c in cs)
            x = [cs[0][i][0] for i in range(n)]
            m = [st.mean(c[i][1] for c in cs) for i in range(n)]
            s = [st.stdev(c[i][1] for c in cs) if len(cs) > 1 else 0 for i in range(n)]
            ax.plot(x, m, label=cfg)
            ax.fill_between(x, [a - b for a, b in zip(m, s)], [a + b for a, b in zip(m, s)], alpha=0.15)
        ax.set_xlabel("env steps per agent")
        ax.set_ylabel(f"population's mean fitness (mean ± std over {len(cs)} seeds)")
        ax.set_title(a.title)
        if a.ymin is not None:
            ax.set_ylim(bottom=a.ymin)
        ax.legend()
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(a.plot, dpi=110)


if __name__ == "__main__":
    main()
