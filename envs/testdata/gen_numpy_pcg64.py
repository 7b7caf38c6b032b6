"""Writes numpy_pcg64.json: NumPy's SeedSequence state, PCG64 raw output and
Generator draws for a few seeds, the reference that envs/nprandom_test.go
holds the Go port (envs/nprandom.go) to on machines without Python.

Run from the repository root with NumPy >= 1.17 (recorded with 1.24):

    python3 envs/testdata/gen_numpy_pcg64.py > envs/testdata/numpy_pcg64.json
"""
import json
import sys

import numpy as np

SEEDS = [0, 1, 5, 42, 2**31 - 1, 2**32 - 1, 2**32 + 7, 2**63 - 1]


def hex64(xs):
    return ["0x%016x" % int(x) for x in xs]


def record(seed):
    ss = np.random.SeedSequence(seed)
    raw = np.random.PCG64(seed).random_raw(10)
    g = np.random.Generator(np.random.PCG64(seed))
    doubles = g.random(10)
    g = np.random.Generator(np.random.PCG64(seed))
    uniform = g.uniform(-0.05, 0.05, size=4)
    # Bounded integers go through next_uint32, which hands out the low and
    # then the high half of one 64-bit output; doubles in between take whole
    # outputs. This order (two integers, a double, one integer, a double) is
    # LunarLander's with wind, and crosses both paths.
    g = np.random.Generator(np.random.PCG64(seed))
    mixed = []
    for kind in ["int", "int", "double", "int", "double"]:
        if kind == "int":
            mixed.append(int(g.integers(-9999, 9999)))
        else:
            mixed.append(float(g.random()))
    # Generator.shuffle draws with random_interval on 32-bit draws; two
    # shuffles in a row (POPGym's CountRecall shuffles two decks) and a
    # double after them show that the halves of 64-bit outputs carry over.
    g = np.random.Generator(np.random.PCG64(seed))
    shuffles = []
    for n in [52, 104]:
        x = np.arange(n)
        g.shuffle(x)
        shuffles.append([int(v) for v in x])
    after_shuffles = float(g.random())
    return {
        "seed": seed,
        "seed_sequence_state": hex64(ss.generate_state(4, np.uint64)),
        "raw": hex64(raw),
        "random": [float(x) for x in doubles],
        "uniform_pm005": [float(x) for x in uniform],
        "integers_and_random": mixed,
        "shuffles": shuffles,
        "random_after_shuffles": after_shuffles,
    }


def main():
    out = {
        "numpy_version": np.__version__,
        "generator": "numpy.random.Generator(numpy.random.PCG64(seed))",
        "cases": [record(s) for s in SEEDS],
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
