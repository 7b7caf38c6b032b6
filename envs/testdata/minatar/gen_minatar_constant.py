"""Writes constant_actions.json: how long the original MinAtar's episodes
last, and what they return, when one action is played throughout.

    PYTHONPATH=/path/to/MinAtar /usr/bin/python3 gen_minatar_constant.py > constant_actions.json

MinAtar is kenjyoung/MinAtar at 4241f24 (v1.0.15), which needs NumPy.
Every game is played through minatar.Environment with sticky_action_prob=0
and difficulty ramping on, every action 0..5 of the full set (0 no-op,
1 left, 2 up, 3 right, 4 down, 5 fire), for EPISODES episodes; episode i is
seeded with i (Environment.seed(i), then reset). An episode is cut after
CAP steps: under the actions that never leave the surface, Seaquest's never
ends. A length counts the calls of act up to and including the one that
returned terminal (or the CAP-th).

Each entry "<game>/<action>" holds the episodes' count, the cap, how many
were cut, the mean and sample standard deviation of the return and of the
length, and their minima and maxima. Where every episode gave the same
length and the same return (the game drew nothing that mattered under that
policy), the port must match them exactly; elsewhere, statistically
(envs/minatar_test.go).
"""
import json
import math
import sys

from minatar import Environment

GAMES = ["breakout", "asterix", "freeway", "space_invaders", "seaquest"]
EPISODES = 1000
CAP = 3000


def episode(env, action, seed):
    env.seed(seed)
    env.reset()
    ret, length = 0.0, 0
    while length < CAP:
        r, done = env.act(action)
        ret += float(r)
        length += 1
        if done:
            break
    return ret, length


def mean_std(xs):
    m = sum(xs) / len(xs)
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def main():
    out = {"source": "kenjyoung/MinAtar 4241f24 (v1.0.15)",
           "sticky_action_prob": 0.0, "difficulty_ramping": True,
           "episodes": EPISODES, "cap": CAP, "games": {}}
    for game in GAMES:
        env = Environment(game, sticky_action_prob=0.0, difficulty_ramping=True)
        for action in range(6):
            returns, lengths = [], []
            for seed in range(EPISODES):
                r, n = episode(env, action, seed)
                returns.append(r)
                lengths.append(n)
            rm, rs = mean_std(returns)
            lm, ls = mean_std(lengths)
            out["games"]["%s/%d" % (game, action)] = {
                "return_mean": rm, "return_std": rs, "return_min": min(returns), "return_max": max(returns),
                "length_mean": lm, "length_std": ls, "length_min": min(lengths), "length_max": max(lengths),
                "cut": sum(1 for n in lengths if n >= CAP),
            }
            print("%s/%d: length %.2f (%d..%d), return %.3f" % (game, action, lm, min(lengths), max(lengths), rm),
                  file=sys.stderr)
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
