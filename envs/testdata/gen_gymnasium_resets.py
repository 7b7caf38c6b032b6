"""Writes gymnasium_resets.json: the start states of Gymnasium's
classic-control envs after reset(seed=s) and three further unseeded reset()
calls, and the random draws of LunarLander-v3's reset, the reference that
envs/seeding_test.go holds the Go envs to on machines without Python.

Run from the repository root with Gymnasium 0.29.1 and NumPy (recorded with
NumPy 1.24):

    PYTHONPATH=/path/to/gymnasium-0.29.1 python3 envs/testdata/gen_gymnasium_resets.py \
        > envs/testdata/gymnasium_resets.json
"""
import json
import sys

import numpy as np

import gymnasium as gym
from gymnasium.utils import seeding

IDS = ["CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0", "Pendulum-v1"]
SEEDS = [0, 1, 5, 42, 2**31 - 1, 2**32 - 1]
UNSEEDED = 3


def start(env, obs):
    # float32 observations and (for Acrobot) float32 states widen to float64
    # exactly, so JSON's shortest round-trip decimals carry every bit.
    state = np.asarray(env.unwrapped.state, dtype=np.float64)
    return {"obs": [float(x) for x in np.asarray(obs, dtype=np.float64)],
            "state": [float(x) for x in state]}


def classic(env_id):
    env = gym.make(env_id)
    runs = []
    for seed in SEEDS:
        obs, _ = env.reset(seed=seed)
        resets = [start(env, obs)]
        for _ in range(UNSEEDED):
            obs, _ = env.reset()
            resets.append(start(env, obs))
        runs.append({"seed": seed, "resets": resets})
    return {"env_id": env_id, "runs": runs}


def lunar_lander_draws(seed):
    """LunarLander-v3's reset (Gymnasium 1.x, with enable_wind) without
    Box2D, which is not needed for its draws: CHUNKS+1 terrain heights,
    the helipad flattened and the heights smoothed as the env does, the two
    components of the initial force, the wind and torque phases, then the
    first step's two engine dispersions (reset ends with one step)."""
    viewport_w, viewport_h, scale, chunks, initial_random = 600, 400, 30.0, 11, 1000.0
    w, h = viewport_w / scale, viewport_h / scale
    rng, _ = seeding.np_random(seed)
    height = rng.uniform(0, h / 2, size=(chunks + 1,))
    helipad_y = h / 4
    for i in range(chunks // 2 - 2, chunks // 2 + 3):
        height[i] = helipad_y
    smooth_y = [0.33 * (height[i - 1] + height[i + 0] + height[i + 1]) for i in range(chunks)]
    force = [rng.uniform(-initial_random, initial_random) for _ in range(2)]
    wind_idx = int(rng.integers(-9999, 9999))
    torque_idx = int(rng.integers(-9999, 9999))
    dispersion = [rng.uniform(-1.0, +1.0) / scale for _ in range(2)]
    return {"seed": seed, "smooth_y": [float(y) for y in smooth_y],
            "force": [float(f) for f in force], "wind_idx": wind_idx,
            "torque_idx": torque_idx, "dispersion": [float(d) for d in dispersion]}


def main():
    out = {
        "gymnasium_version": gym.__version__,
        "numpy_version": np.__version__,
        "unseeded_resets": UNSEEDED,
        "envs": [classic(i) for i in IDS],
        "lunar_lander_v3_draws": [lunar_lander_draws(s) for s in SEEDS],
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
