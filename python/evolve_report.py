"""The report of python/evolve_compare.py: what a curve says (steps to the
anchor, the best score at a budget), the table of REPORT.md with the
winning agents' schedules, and curves.png. evolve_significance.py reads
curves.csv through the same functions.
"""

import csv
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evolve_tune  # noqa: E402  (the base config's start lr)

PROG = "evolve_compare"
STUDY_METHODS = ("tpe", "random")


def is_study(method):
    """Whether method (as run, or imported under a label such as "tpe (kl off)")
    is a tuner's studies."""
    return method.split(" ")[0] in STUDY_METHODS


def to_anchor(curve, anchor):
    for steps, score in curve:
        if score >= anchor:
            return steps
    return None


def at_budget(curve, budget):
    best = -math.inf
    for steps, score in curve:
        if steps > budget:
            break
        best = max(best, score)
    return best


def fmt_steps(n):
    if n is None:
        return "never"
    return f"{n / 1e6:.2f}M" if n >= 1e6 else f"{n / 1e3:.0f}k"


def shown(run):
    """A run's steps to the anchor as the table shows them: an unfinished run
    that has not reached it yet is "> its steps so far"."""
    label, curve, sta = run
    if sta is None and "unfinished" in label and curve:
        return f"> {fmt_steps(curve[-1][0])}"
    return fmt_steps(sta)


def mean_std(xs):
    """Mean ± sample std (n − 1) of the finite scores; where some run had no
    confirmed score yet, the mean is of the others and says so."""
    fin = [x for x in xs if math.isfinite(x)]
    if not fin:
        return "–"
    of = "" if len(fin) == len(xs) else f" (of the {len(fin)} of {len(xs)} with a confirmed score)"
    if len(fin) == 1:
        return f"{fin[0]:.1f}{of}"
    return f"{statistics.mean(fin):.1f} ± {statistics.stdev(fin):.1f}{of}"


def median_steps(xs):
    """The median steps to the anchor, a run that never got there counting as
    more than any that did; None when half or more never did."""
    if not xs:
        return None
    got = sorted(x for x in xs if x is not None)
    vals = got + [math.inf] * (len(xs) - len(got))
    m = statistics.median(vals)
    return None if math.isinf(m) else int(m)


def lineage(run):
    """The elite's hyperparameters and the events of its lineage: the
    exploit/explore steps (or mutations) it and its ancestors received, oldest
    first, as (generation, agent, description)."""
    with open(os.path.join(run, "summary.json")) as f:
        elite = json.load(f).get("elite_index", -1)
    with open(os.path.join(run, "metrics.csv"), newline="") as f:
        r = csv.reader(f)
        header = next(r)
        rows = [dict(zip(header, rec)) for rec in r]
    hps = header[header.index("grad_norm") + 1:header.index("net")]
    first = {}  # agent -> its first row
    for row in rows:
        first.setdefault(row["agent"], row)
    events, agent, final = [], str(elite), None
    for row in rows:
        if row["agent"] == str(elite):
            final = row
    while agent in first:
        row = first[agent]
        m = row["mutation"]
        if m not in ("initial",) and not m.startswith("none"):
            events.append((int(row["generation"]), agent, m))
        if row["parent"] == "-1":
            events.append((int(row["generation"]), agent, "initial: " + ", ".join(f"{h} {row[h]}" for h in hps)))
            break
        agent = row["parent"]
    events.reverse()
    values = {h: final[h] for h in hps} if final else {}
    return values, events


def final_lr(run):
    """The geometric mean of the last generation's lr, or None."""
    path = os.path.join(run, "metrics.csv")
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    last = [float(r["lr"]) for r in rows if r["generation"] == rows[-1]["generation"]]
    return math.exp(statistics.mean(math.log(x) for x in last)) if last else None


def none_here(args, why):
    """The line of a section with no run of this report to list: where the
    runs it would list are, or why there are none."""
    imported = list(args.imported_methods) + [m for m in args.imported_seeds if m not in args.imported_methods]
    if imported:
        return (f"None here: {' and '.join(imported)} {'was' if len(imported) == 1 else 'were'} imported; "
                f"the report beside {args.imported} lists theirs; {why}.")
    return f"None here: {why}."


def report(args, results, budget, study_budget):  # noqa: C901 (one table, written in order)
    # Without an evolve run there is no B: "at B" is each study's best at its end.
    plotted_budget, budget = budget, budget if budget > 0 else math.inf
    rows = []
    for m, runs in results.items():
        for label, curve, sta in runs:
            rows.append([m, label, "" if sta is None else sta, at_budget(curve, budget), curve[-1][0] if curve else 0,
                         curve[-1][1] if curve else -math.inf])
    with open(os.path.join(args.out, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["method", "run", "global_steps_to_anchor", "best_confirmed_at_equal_budget",
                    "final_global_steps", "final_best_confirmed"])
        w.writerows(rows)
    with open(os.path.join(args.out, "curves.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["method", "run", "global_steps", "best_confirmed"])
        for m, runs in results.items():
            for label, curve, _ in runs:
                for steps, score in curve:
                    w.writerow([m, label, steps, score])
    tpe = median_steps([sta for _, _, sta in results.get("tpe", [])]) if "tpe" in results else None
    ran = sorted(set(args.study_budgets))
    if not ran and not any(m in STUDY_METHODS for m in args.methods):
        stopped_at = "the budget of the report it is imported from"
    elif ran and ran != [study_budget]:
        # Studies reused from an earlier invocation ran with the budget of then.
        stopped_at = (f"{' or '.join(fmt_steps(b) for b in ran)} (the budget each study ran with; "
                      f"now it would be {fmt_steps(study_budget)}: {args.why_budget})")
    else:
        stopped_at = f"{fmt_steps(study_budget)} ({args.why_budget})"
    # The studies that stopped short of the anchor spent at least the smallest budget.
    least_budget = min(ran) if ran else study_budget
    lines = [f"# {os.path.basename(args.config)}: anchor {args.anchor:g}", "",
             "Global env steps: training, evaluation and elite confirmation. "
             + (f"Equal budget B = {fmt_steps(budget)} global steps ({args.budget_of})" if plotted_budget > 0 else
                "No evolve run, so no equal budget B: \"at B\" is each study's best confirmed score at its end")
             + (f"; a study stopped at {stopped_at}, or sooner once a trial had "
                "reached the anchor and B was spent." if any(m in STUDY_METHODS for m in results) else ".")
             + (f" Imported from an earlier report ({args.imported}): {', '.join(args.imported_methods)}."
                if args.imported_methods else "")
             + "".join(f" {m}'s {', '.join(labels)} imported from an earlier report ({args.imported})."
                       for m, labels in args.imported_seeds.items()), "",
             "| method | runs | reached | global steps to anchor: median (each) | ÷ TPE's | best confirmed at B: mean ± std (each) "
             "| at the end: best confirmed (global steps) |",
             "|---|---|---|---|---|---|---|"]
    for m, runs in results.items():
        stas = [sta for _, _, sta in runs]
        med = median_steps(stas)
        tpe_runs = results.get("tpe", [])
        if tpe and med:
            ratio = f"{med / tpe:.2f}"
        elif med and tpe_runs and tpe is None and not any("unfinished" in r[0] for r in tpe_runs):
            ratio = f"< {med / least_budget:.2f}"  # the studies stopped at their budget short of the anchor
        else:
            ratio = "–"
        if m == "tpe":
            ratio = "1" if tpe else "–"
        scores = [at_budget(c, budget) for _, c, _ in runs]
        # A run stopped short of B has no score at B yet: its best so far is
        # marked, and so is a mean that holds it.
        short = [bool(c) and "unfinished" in label and c[-1][0] < budget for label, c, _ in runs]
        each = [f"{x:.1f}" + (f" unfinished at {fmt_steps(r[1][-1][0])}" if sh else "")
                for x, r, sh in zip(scores, runs, short)]
        mean = mean_std(scores) + (f" ({sum(short)} of {len(runs)} unfinished{' short of B' if plotted_budget > 0 else ''})" if any(short) else "")
        lines.append(f"| {m} | {len(runs)} | {sum(s is not None for s in stas)}/{len(runs)} | {fmt_steps(med)} "
                     f"({', '.join(shown(r) for r in runs)}) | {ratio} | {mean} "
                     f"({', '.join(each)}) | "
                     + ", ".join(f"{c[-1][1]:.1f} ({fmt_steps(c[-1][0])})" for _, c, _ in runs if c) + " |")
    lr0 = evolve_tune.load_base(args.config).get("ppo", {}).get("lr")
    start = "evolve's default" if lr0 is None else f"{lr0:g}"
    lines += ["", "## Where the learning rate went", "",
              f"The geometric mean of the last generation's lr in each run (the start: {start}, times F for pbt-lrF).", ""]
    listed = len(lines)
    for m in results:
        if m in STUDY_METHODS or m in args.imported_methods:
            continue
        seeds = [s for s in range(1, (args.counts[m] or args.seeds) + 1)
                 if f"seed {s}" not in args.imported_seeds.get(m, [])]
        if not seeds:
            continue
        lrs = [final_lr(os.path.join(args.out, m, f"seed-{s}", "run")) for s in seeds]
        lines.append(f"- {m}: " + ", ".join(("–" if x is None else f"{x:.2g}") + (f" (seed {s})" if m in args.imported_seeds else "")
                                            for s, x in zip(seeds, lrs)))
    if len(lines) == listed:
        lines.append(none_here(args, "a study's trials keep their lr"))
    lines += ["", "## The winning agents' schedules", "",
              "Each PBT run's elite: its hyperparameters at the end and what its lineage received "
              "(generation: event), oldest first.", ""]
    listed = len(lines)
    for m in results:
        if not m.startswith(("pbt", "pb2")) or m in args.imported_methods:
            continue
        for s in range(1, (args.counts[m] or args.seeds) + 1):
            run = os.path.join(args.out, m, f"seed-{s}", "run")
            if not os.path.exists(os.path.join(run, "summary.json")):
                continue
            values, events = lineage(run)
            lines.append(f"- **{m} seed {s}**: " + ", ".join(f"{k} {v}" for k, v in values.items()))
            for g, a, e in events:
                lines.append(f"  - gen {g}, agent {a}: {e}")
    if len(lines) == listed:
        lines.append(none_here(args, "only PBT and PB2 runs have schedules"))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.out, "REPORT.md"), "w") as f:
        f.write(text)
    print(text)
    plot(args, results, plotted_budget)


def plot(args, results, budget):
    """curves.png: per method, the median over its runs of the best confirmed
    score so far against global steps (a run not yet confirmed counts as
    below any score), with the range of its runs shaded."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        stale = os.path.join(args.out, "curves.png")
        if os.path.exists(stale):
            os.remove(stale)  # an earlier report's, which this REPORT.md no longer matches
        print(f"{PROG}: matplotlib is not importable: no curves.png (apt-get install python3-matplotlib)", file=sys.stderr)
        return
    ends = [c[-1][0] for runs in results.values() for _, c, _ in runs if c]
    starts = [c[0][0] for runs in results.values() for _, c, _ in runs if c]
    if not ends:
        return
    lo, hi = min(starts), max(ends)
    grid = [lo * (hi / lo) ** (i / 299) for i in range(300)]
    fig, axes = plt.subplots(1, 2, figsize=(14, 5.5), dpi=100)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    if len(results) > len(colors):  # one colour per method, none repeated
        tab20 = list(plt.get_cmap("tab20").colors)
        colors = tab20[0::2] + tab20[1::2]  # the ten dark shades first
    best, lowest = -math.inf, math.inf
    for ax in axes:
        for i, (m, runs) in enumerate(results.items()):
            xs, med, low, high = [], [], [], []
            last = max(c[-1][0] for _, c, _ in runs if c)
            for x in [g for g in grid if g < last] + [last]:
                vals = sorted(at_budget(c, x) for _, c, _ in runs)
                if sum(math.isfinite(v) for v in vals) * 2 <= len(vals):
                    continue  # fewer than half the runs have a confirmed score yet
                fin = [v for v in vals if math.isfinite(v)]
                xs.append(x)
                med.append(statistics.median(vals))
                low.append(min(fin))
                high.append(max(fin))
            if not xs:
                continue
            best, lowest = max(best, max(high)), min(lowest, min(low))
            c = colors[i % len(colors)]
            # Studies dashed; evolve runs imported from an earlier report
            # dash-dotted, so that a line of this report's that coincides
            # with one (the same runs, where a change did not touch them)
            # shows through.
            style = "--" if is_study(m) else "-." if m in args.imported_methods else "-"
            imported = (", imported" if m in args.imported_methods else
                        f", {len(args.imported_seeds[m])} imported" if args.imported_seeds.get(m) else "")
            ax.step(xs, med, where="post", color=c, lw=2, ls=style, label=f"{m} (median of {len(runs)}{imported})")
            ax.fill_between(xs, low, high, step="post", color=c, alpha=0.07)
            ax.plot(xs[-1:], med[-1:], "o", color=c, ms=4)  # the end: visible where the line is one point
        ax.axhline(args.anchor, color="black", ls=":", lw=1.2, label=f"anchor {args.anchor:g}")
        if budget > 0:
            ax.axvline(budget, color="grey", ls=":", lw=1, label="equal budget B")
        ax.set_xscale("log")
        ax.set_xlabel("global env steps (training + evaluation + confirmation)")
        ax.grid(alpha=0.3)
    if not math.isfinite(best):
        plt.close(fig)
        print(f"{PROG}: no run has a confirmed score yet: no curves.png", file=sys.stderr)
        return
    axes[0].set_ylabel("best confirmed score so far")
    axes[0].set_title(f"{os.path.basename(args.config)}: median and range of each method's runs")
    # The right panel zooms on the anchor: three times the best score's
    # distance from it below it (a tenth of it at least), but not below
    # the lowest score drawn (runs that pass the anchor early).
    span = max(3 * abs(best - args.anchor), 0.1 * abs(args.anchor), 1)
    axes[1].set_ylim(max(args.anchor - span, lowest - 0.05 * span), max(best, args.anchor) + 0.1 * span)
    axes[1].set_title("near the anchor")
    axes[1].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "curves.png"))
