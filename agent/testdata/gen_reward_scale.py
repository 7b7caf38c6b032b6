"""Writes reward_scale.json: the rewards Stable-Baselines3's VecNormalize
(norm_reward, norm_obs off) hands to the agent for a recorded stream of
rewards and episode ends, and its return statistics after every step, for
agent's TestRewardScalingMatchesVecNormalize.

    apt-get install python3-numpy
    SB3_SRC=/path/to/stable-baselines3 /usr/bin/python3 agent/testdata/gen_reward_scale.py

SB3_SRC as for gen_gsde.py (2.9.0a4, e05d2dbe). vec_normalize.py is loaded with
stand-ins for the modules it imports but does not use for rewards, and its
step_wait's reward lines are replayed with its own methods (_update_reward,
normalize_reward, then the returns of finished episodes zeroed), so neither
gymnasium nor a real vector env is needed.
"""

import importlib.util
import json
import os
import sys
import types

import numpy as np


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def load_vec_normalize():
    src = os.path.join(os.environ["SB3_SRC"], "stable_baselines3", "common")
    gym = types.ModuleType("gymnasium")
    gym.spaces = types.SimpleNamespace(Box=object, Dict=object, Space=object)
    sys.modules["gymnasium"] = gym
    for name in ["stable_baselines3", "stable_baselines3.common", "stable_baselines3.common.vec_env"]:
        sys.modules[name] = types.ModuleType(name)
    sys.modules["stable_baselines3.common"].utils = types.ModuleType("stable_baselines3.common.utils")
    sys.modules["stable_baselines3.common.utils"] = sys.modules["stable_baselines3.common"].utils
    pre = types.ModuleType("stable_baselines3.common.preprocessing")
    pre.is_image_space = lambda space: False
    sys.modules["stable_baselines3.common.preprocessing"] = pre
    base = types.ModuleType("stable_baselines3.common.vec_env.base_vec_env")
    base.VecEnv, base.VecEnvStepReturn, base.VecEnvWrapper = object, object, object
    sys.modules["stable_baselines3.common.vec_env.base_vec_env"] = base
    rms = load("stable_baselines3.common.running_mean_std", os.path.join(src, "running_mean_std.py"))
    vn = load("stable_baselines3.common.vec_env.vec_normalize", os.path.join(src, "vec_env", "vec_normalize.py"))
    return vn.VecNormalize, rms.RunningMeanStd


# Each case: envs, steps, gamma, clip (None: SB3's default 10), and how
# rewards are drawn: dense negative (Pendulum-like), sparse large (a goal
# reward), and -1 per step (MountainCar), with episodes of random length.
CASES = [
    {"name": "dense", "envs": 4, "steps": 300, "gamma": 0.9, "clip": None},
    {"name": "sparse", "envs": 3, "steps": 400, "gamma": 0.99, "clip": 5.0},
    {"name": "constant", "envs": 8, "steps": 250, "gamma": 0.99, "clip": None},
]


def rewards(rng, kind, n):
    if kind == "dense":
        return -rng.uniform(0, 16, n)
    if kind == "sparse":
        return np.where(rng.uniform(0, 1, n) < 0.02, 100.0, 0.0) - 0.01
    return -np.ones(n)


def main():
    VecNormalize, RunningMeanStd = load_vec_normalize()
    rng = np.random.default_rng(20261126)
    out = []
    for c in CASES:
        vn = VecNormalize.__new__(VecNormalize)  # the reward state only: no venv
        vn.training, vn.norm_reward, vn.gamma, vn.epsilon = True, True, c["gamma"], 1e-8
        vn.clip_reward = 10.0 if c["clip"] is None else c["clip"]
        vn.ret_rms = RunningMeanStd(shape=())
        vn.returns = np.zeros(c["envs"])
        raw, dones, scaled, var, mean, count = [], [], [], [], [], []
        for _ in range(c["steps"]):
            r = rewards(rng, c["name"], c["envs"])
            d = rng.uniform(0, 1, c["envs"]) < 0.01
            # step_wait's reward lines, in its order.
            vn._update_reward(r)
            s = vn.normalize_reward(r)
            vn.returns[d] = 0
            raw.append(r.tolist())
            dones.append(d.tolist())
            scaled.append(s.tolist())
            mean.append(float(vn.ret_rms.mean))
            var.append(float(vn.ret_rms.var))
            count.append(float(vn.ret_rms.count))
        out.append({"name": c["name"], "envs": c["envs"], "gamma": c["gamma"], "clip": c["clip"], "rewards": raw,
                    "dones": dones, "scaled": scaled, "mean": mean, "var": var, "count": count})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reward_scale.json")
    with open(path, "w") as f:
        json.dump({"source": "stable-baselines3 2.9.0a4 VecNormalize (norm_reward), numpy " + np.__version__,
                   "cases": out}, f)
        f.write("\n")


if __name__ == "__main__":
    main()
