"""Is one method's score at an equal budget really above another's?

Reads a curves.csv written by python/evolve_compare.py and, for every method
against a reference method, tests the best confirmed score at the equal
global budget B with Welch's t-test (unequal variances, Welch-Satterthwaite
degrees of freedom):

    /usr/bin/python3 python/evolve_significance.py docs/bench/tuner/acrobot/curves.csv \\
        [-budget 8190000] [-ref fixed] [-methods pb2,pbt,random] [-paired]

With -paired the runs are paired by their label (seed N): two methods whose
runs of one seed start from the same agents (pb2 and fixed, pb2-sample and
fixed-sample) differ, seed by seed, only in the search. The table then gives
the mean of the seeds' differences with its 95 % interval and the paired
t-test's two-sided p, the exact two-sided Wilcoxon signed-rank p (zero
differences dropped, tied magnitudes given their mean rank), and on how many
seeds the method is ahead. Welch's test ignores the pairing; which of the two
a report quotes is a choice the report must say.

B defaults to what evolve_compare.py takes: the smallest final global steps
of the runs that are neither studies (tpe, random) nor on a budget of their
own (-popN, -xK). The table gives each method's mean ± std at B, its
difference from the reference with a 95 % confidence interval, t, the
degrees of freedom and the two-sided p-value. With 3 to 5 seeds a method is
"ahead" only when the interval excludes 0; the seeds' spread is what the test
weighs the difference against, not the number of seeds alone.
"""

import argparse
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evolve_compare  # noqa: E402  (curves.csv, B, the methods' kinds)
import evolve_report  # noqa: E402  (the score at B, steps and mean ± std as the reports write them)
import evolve_tune  # noqa: E402  (step counts written as people write them)

PROG = "evolve_significance"


def betainc(a, b, x):
    """The regularised incomplete beta function I_x(a, b), by its continued
    fraction (modified Lentz), on the side where the fraction converges fast."""
    if not 0 <= x <= 1:
        raise ValueError(f"betainc: x = {x} outside [0, 1]")
    if x in (0, 1):
        return float(x)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1) / (a + b + 2):
        return 1 - betainc(b, a, 1 - x)
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 500):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + num * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + num / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1) < 1e-15:
            break
    return front * f / a


def t_sf2(t, df):
    """P(|T| > |t|) for Student's t with df degrees of freedom."""
    return betainc(df / 2, 0.5, df / (df + t * t))


def t_quantile(p, df):
    """The t with P(T <= t) = p, for 0.5 <= p < 1, by bisection."""
    lo, hi = 0.0, 1.0
    while 1 - t_sf2(hi, df) / 2 < p:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if 1 - t_sf2(mid, df) / 2 < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def welch(xs, ys):
    """Welch's test of mean(xs) - mean(ys): (difference, 95 % interval, t,
    degrees of freedom, two-sided p). Samples without spread give t = ±inf
    and p = 0 when the means differ, p = 1 when they do not."""
    if len(xs) < 2 or len(ys) < 2:
        raise ValueError("welch: want at least 2 runs on each side")
    diff = statistics.mean(xs) - statistics.mean(ys)
    vx, vy = statistics.variance(xs) / len(xs), statistics.variance(ys) / len(ys)
    se = math.sqrt(vx + vy)
    if se == 0:
        return diff, (diff, diff), (0.0 if diff == 0 else math.copysign(math.inf, diff)), math.nan, float(diff == 0)
    df = (vx + vy) ** 2 / (vx * vx / (len(xs) - 1) + vy * vy / (len(ys) - 1))
    t = diff / se
    half = t_quantile(0.975, df) * se
    return diff, (diff - half, diff + half), t, df, t_sf2(t, df)


def paired(xs, ys):
    """The paired t-test of xs[i] - ys[i]: (mean difference, 95 % interval,
    t, degrees of freedom, two-sided p)."""
    if len(xs) != len(ys) or len(xs) < 2:
        raise ValueError("paired: want two equal-length samples of at least 2")
    d = [x - y for x, y in zip(xs, ys)]
    mean = statistics.mean(d)
    se = statistics.stdev(d) / math.sqrt(len(d))
    df = len(d) - 1
    if se == 0:
        return mean, (mean, mean), (0.0 if mean == 0 else math.copysign(math.inf, mean)), df, float(mean == 0)
    t = mean / se
    half = t_quantile(0.975, df) * se
    return mean, (mean - half, mean + half), t, df, t_sf2(t, df)


def wilcoxon(xs, ys):
    """The exact two-sided p of Wilcoxon's signed-rank test of xs[i] - ys[i]:
    zero differences dropped, tied magnitudes given their mean rank, and the
    statistic (the sum of the positive differences' ranks) held against all
    2^n sign assignments, counted through their distribution (ranks doubled
    to integers). 1 when every difference is zero."""
    d = [x - y for x, y in zip(xs, ys) if x != y]
    if not d:
        return 1.0
    order = sorted(range(len(d)), key=lambda i: abs(d[i]))
    rank2 = [0] * len(d)  # twice the mean rank: an integer
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and abs(d[order[j + 1]]) == abs(d[order[i]]):
            j += 1
        for k in range(i, j + 1):
            rank2[order[k]] = i + j + 2
        i = j + 1
    counts = {0: 1}  # sum of doubled ranks -> number of sign assignments
    for r in rank2:
        nxt = dict(counts)
        for s, c in counts.items():
            nxt[s + r] = nxt.get(s + r, 0) + c
        counts = nxt
    w = sum(r for r, x in zip(rank2, d) if x > 0)
    total, mid = 2 ** len(d), sum(rank2) / 2
    extreme = sum(c for s, c in counts.items() if abs(s - mid) >= abs(w - mid) - 1e-9)
    return min(1.0, extreme / total)


def pairs(runs, ref, m, score):
    """The scores of method m and of ref on the run labels both have, in
    label order: (labels, m's, ref's)."""
    a = {label: score(m, c) for label, c, _ in runs[m]}
    b = {label: score(ref, c) for label, c, _ in runs[ref]}
    labels = sorted(set(a) & set(b), key=lambda s: (len(s), s))
    return labels, [a[s] for s in labels], [b[s] for s in labels]


def default_budget(runs):
    budget, _ = evolve_compare.shared_budget(runs)
    if not budget:
        raise evolve_tune.BadInput("no evolve run to take B from: give -budget")
    return budget


def at_for(budget):
    """The score at B of a method's run (its own end for -popN, -xK)."""
    def at(m, c):
        return evolve_report.at_budget(c, math.inf if evolve_compare.own_budget(m) else budget)
    return at


def unfinished_note(m, runs, budget):
    """Says how many of a method's runs stopped unfinished short of B (their
    score is their best so far, not at B), or ""."""
    end = math.inf if evolve_compare.own_budget(m) else budget
    n = sum(1 for label, c, _ in runs if "unfinished" in label and c and c[-1][0] < end)
    return f" ({n} of {len(runs)} unfinished short of B: their best so far)" if n else ""


def paired_table(runs, ref, budget, methods):
    at = at_for(budget)
    lines = [f"Best confirmed score at B = {evolve_report.fmt_steps(budget)} global steps, each method against {ref}, "
             "paired by seed (paired t-test and exact Wilcoxon signed-rank, two-sided).", "",
             f"| method | pairs | − {ref}, mean [95 % CI] | t (df) | p (t) | p (Wilcoxon) | ahead |",
             "|---|---|---|---|---|---|---|"]
    for m in methods:
        if m == ref:
            continue
        labels, xs, ys = pairs(runs, ref, m, at)
        if len(labels) < 2 or any(not math.isfinite(v) for v in xs + ys):
            lines.append(f"| {m}{unfinished_note(m, runs[m], budget)} | {len(labels)} | – (fewer than 2 pairs, or one unconfirmed at B) | – | – | – | – |")
            continue
        d, (lo, hi), t, df, p = paired(xs, ys)
        ahead = sum(x > y for x, y in zip(xs, ys))
        tdf = "– (no spread)" if not math.isfinite(t) else f"{t:.2f} ({df})"
        lines.append(f"| {m}{unfinished_note(m, runs[m], budget)} | {len(labels)} | {d:+.1f} [{lo:+.1f}, {hi:+.1f}] | {tdf} | {p:.3f} | "
                     f"{wilcoxon(xs, ys):.3f} | {ahead} of {len(labels)} |")
    return "\n".join(lines)


def table(runs, ref, budget, methods):
    # A method with its own budget (-popN, -xK) is left out of B, as in the
    # report: it is taken at the end of its own runs, and the table says so.
    at = at_for(budget)
    scores = {m: [at(m, c) for _, c, _ in rs] for m, rs in runs.items()}
    base = scores[ref]
    lines = [f"Best confirmed score at B = {evolve_report.fmt_steps(budget)} global steps, "
             f"each method against {ref} (Welch's t-test, two-sided).", "",
             f"| method | runs | at B: mean ± std | − {ref} [95 % CI] | t (df) | p |",
             "|---|---|---|---|---|---|"]
    for m in methods:
        xs = scores[m]
        name = m
        if evolve_compare.own_budget(m):
            ends = [c[-1][0] for _, c, _ in runs[m] if c]
            name += f" (its own budget: at its end, ≈ {evolve_report.fmt_steps(int(statistics.median(ends)))})" if ends else ""
        name += unfinished_note(m, runs[m], budget)
        row = f"| {name} | {len(xs)} | {evolve_report.mean_std(xs)} |"
        if m == ref:
            lines.append(row + " – | – | – |")
            continue
        if any(not math.isfinite(x) for x in xs + base) or len(xs) < 2 or len(base) < 2:
            lines.append(row + " – (fewer than 2 runs, or one unconfirmed at B) | – | – |")
            continue
        d, (lo, hi), t, df, p = welch(xs, base)
        tdf = "– (no spread)" if math.isnan(df) else f"{t:.2f} ({df:.1f})"
        lines.append(row + f" {d:+.1f} [{lo:+.1f}, {hi:+.1f}] | {tdf} | {p:.3f} |")
    return "\n".join(lines)


def split_methods(text, known):
    """The method names in text, comma-separated. A name may hold commas
    itself (an imported label, "fixed (kl off, clipped loss)"): at each
    place the longest run of comma-separated parts that names a known method
    is taken; a part that starts none is taken alone (and refused later)."""
    parts, names, i = text.split(","), [], 0
    while i < len(parts):
        j = next((j for j in range(len(parts), i, -1) if ",".join(parts[i:j]) in known), i + 1)
        name = ",".join(parts[i:j])
        if name:
            names.append(name)
        i = j
    return names


def main(argv):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("curves", help="a curves.csv of python/evolve_compare.py")
    p.add_argument("-budget", type=evolve_tune.int_arg, default=0, help="the equal global budget B (default: as the report's)")
    p.add_argument("-ref", default="fixed", help="the method every other is tested against")
    p.add_argument("-methods", default="", help="the methods to show, comma-separated; a name may hold commas (default: all)")
    p.add_argument("-paired", action="store_true", help="pair the runs by seed (paired t and Wilcoxon) instead of Welch's test")
    args = p.parse_args(argv)
    try:
        if not os.path.isfile(args.curves):
            raise evolve_tune.BadInput(f"{args.curves}: " + ("a directory: give its curves.csv" if os.path.isdir(args.curves)
                                                              else "no such file"))
        try:
            runs = evolve_compare.import_curves(args.curves, math.inf)
        except (OSError, UnicodeDecodeError) as e:
            raise evolve_tune.BadInput(f"{args.curves}: {e}") from None
        except (KeyError, ValueError) as e:
            raise evolve_tune.BadInput(f"{args.curves}: not a curves.csv of evolve_compare.py (want the columns method, "
                                       f"run, global_steps, best_confirmed): {e!r}") from None
        if args.budget < 0:
            raise evolve_tune.BadInput(f"-budget {args.budget}: want global steps >= 1 (or 0 for the report's B)")
        methods = split_methods(args.methods, runs) or list(runs)
        for m in methods + [args.ref]:
            if m not in runs:
                raise evolve_tune.BadInput(f"{args.curves}: no method {m!r} (it has {', '.join(runs)})")
        budget = args.budget or default_budget(runs)
        print((paired_table if args.paired else table)(runs, args.ref, budget, methods))
    except evolve_tune.BadInput as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
