"""Gymnasium's own vector loop, for comparing with evolve's Python bridge.

Steps a SyncVectorEnv of N CartPole-v1 envs with the actions evolve's
BenchmarkVectorStep uses (env i takes i % 2 at every step) and prints
env-steps/s; then the same envs stepped one by one in a plain Python loop
(reset by hand when an episode ends), the Python work the bridge cannot
avoid. Usage: python3 bench_gym_vector.py [N ...] (default 1 8 64).
"""
import sys
import time

import gymnasium as gym
import numpy as np


def timed(step, n, seconds=2.0):
    """Returns env-steps/s of calling step() for about `seconds`."""
    calls, start = 0, time.perf_counter()
    while True:
        for _ in range(100):
            step()
        calls += 100
        el = time.perf_counter() - start
        if el >= seconds:
            return calls * n / el


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [1, 8, 64]
    print("gymnasium", gym.__version__, "numpy", np.__version__)
    for n in sizes:
        actions = np.arange(n) % 2
        vec = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1") for _ in range(n)])
        vec.reset(seed=0)
        sync = timed(lambda: vec.step(actions), n)
        vec.close()

        envs = [gym.make("CartPole-v1") for _ in range(n)]
        for i, e in enumerate(envs):
            e.reset(seed=i)
        acts = [int(a) for a in actions]

        def loop():
            for e, a in zip(envs, acts):
                _, _, term, trunc, _ = e.step(a)
                if term or trunc:
                    e.reset()
        plain = timed(loop, n)
        print("n=%d SyncVectorEnv %.0f env-steps/s (%.2f us/vector step); plain loop %.0f env-steps/s (%.2f us/vector step)"
              % (n, sync, 1e6 * n / sync, plain, 1e6 * n / plain))


main()
