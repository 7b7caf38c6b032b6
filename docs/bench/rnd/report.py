"""Summarise the Deep Sea and MountainCar runs of run.sh and mountaincar.sh.

    python3 docs/bench/rnd/report.py bench/rnd > docs/bench/rnd/results.md

Reads every run directory METHOD-N-sS (Deep Sea) and mc-METHOD-sS
(MountainCar) under the given directory: its summary.json (the confirmed
elite's score, the global env steps: training, evaluation and confirmation)
and metrics.csv (the global steps when the elite first reached the target).
Standard library only (and python/evolve_compare.py's format of steps).
"""

import collections
import csv
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python"))
from evolve_report import fmt_steps as fmt  # noqa: E402 (the tuner report's format of steps)


def first_target(run, target):
    """Global steps after the generation whose confirmed elite first reached target."""
    with open(os.path.join(run, "metrics.csv")) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        if float(r["elite_fitness"]) >= target:
            return int(r["global_steps"])
    return None


def main(root):
    runs = collections.defaultdict(list)
    for name in sorted(os.listdir(root)):
        m = re.fullmatch(r"(ppo|rnd|ppod)-(\d+)-s(\d+)", name) or re.fullmatch(r"mc-(ppo|rnd|rnd4)-s(\d+)", name)
        path = os.path.join(root, name)
        if not m or not os.path.exists(os.path.join(path, "summary.json")):
            continue
        with open(os.path.join(path, "summary.json")) as f:
            s = json.load(f)
        if name.startswith("mc-"):
            key, target = ("MountainCar-v0", m.group(1)), -110.0
        else:
            key, target = (f"DeepSea-{m.group(2)}", m.group(1)), 0.9
        score = s["elite_fitness"]
        score = float(score) if not isinstance(score, str) else float(score.replace("inf", "Infinity"))
        runs[key].append((int(m.groups()[-1]), first_target(path, target), score, s["global_steps"]))
    print("| env | method | solved | global steps to the goal: median (each seed) | confirmed score (each seed) | global steps run |")
    print("|---|---|---|---|---|---|")
    def order(k):
        env, method = k
        n = int(env.split("-")[1]) if env.startswith("DeepSea") else 10**6
        return (n, ["ppo", "rnd", "rnd4", "ppod"].index(method))
    for key in sorted(runs, key=order):
        rs = sorted(runs[key])
        hits = [r[1] for r in rs if r[1] is not None]
        med = fmt(int(statistics.median([r[1] if r[1] is not None else float("inf") for r in rs]))
                  if len(hits) * 2 > len(rs) else None)
        each = ", ".join(fmt(r[1]) for r in rs)
        scores = ", ".join(f"{r[2] + 0.0:.2f}".replace("-0.00", "0.00") for r in rs)
        spent = ", ".join(fmt(r[3]) for r in rs)
        name = {"ppo": "PPO", "rnd": "PPO + RND", "rnd4": "PPO + RND, rnd_coef 4", "ppod": "PPO+D (5 demos)"}[key[1]]
        print(f"| {key[0]} | {name} | {len(hits)}/{len(rs)} | {med} ({each}) | {scores} | {spent} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench/rnd")
