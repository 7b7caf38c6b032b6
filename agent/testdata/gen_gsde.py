"""Writes gsde.json: what Stable-Baselines3's StateDependentNoiseDistribution
(gSDE, with PPO's defaults: full_std, exp, no squashing, features not learnt)
computes on recorded features, means, log-std matrices and exploration
matrices, for agent's TestSDEMatchesStableBaselines3.

    apt-get install python3-torch python3-numpy
    SB3_SRC=/path/to/stable-baselines3 /usr/bin/python3 agent/testdata/gen_gsde.py

SB3_SRC is a checkout of github.com/DLR-RM/stable-baselines3 (the directory
holding the package stable_baselines3); the file was made with 2.9.0a4
(e05d2dbe). Only common/distributions.py is loaded: the two modules it imports
that need gymnasium are replaced by the one function it uses from them, so
neither gymnasium nor the rest of SB3 is needed.
"""

import importlib.util
import json
import os
import sys
import types

import numpy as np
import torch as th

th.set_default_dtype(th.float64)


def load_distributions():
    """Loads SB3's distributions.py with stand-ins for its gymnasium and
    preprocessing imports (get_action_dim is not used by gSDE)."""
    gym = types.ModuleType("gymnasium")
    gym.spaces = types.SimpleNamespace(Space=object, Box=object, Discrete=object, MultiDiscrete=object, MultiBinary=object)
    sys.modules["gymnasium"] = gym
    sys.modules["gymnasium.spaces"] = gym.spaces
    for name in ["stable_baselines3", "stable_baselines3.common"]:
        sys.modules[name] = types.ModuleType(name)
    pre = types.ModuleType("stable_baselines3.common.preprocessing")
    pre.get_action_dim = lambda space: None
    sys.modules["stable_baselines3.common.preprocessing"] = pre
    path = os.path.join(os.environ["SB3_SRC"], "stable_baselines3", "common", "distributions.py")
    spec = importlib.util.spec_from_file_location("sb3_distributions", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# Each case: feature width, action dims, rows, the log-std matrix's range,
# and whether the actions are gSDE's own samples (else arbitrary actions,
# far from the mean too).
CASES = [
    {"name": "pendulum-like", "feat": 8, "act": 1, "rows": 6, "log_std": (-2.0, 0.5), "sampled": True},
    {"name": "two actions", "feat": 5, "act": 2, "rows": 7, "log_std": (-1.0, 1.0), "sampled": True},
    {"name": "one row", "feat": 4, "act": 3, "rows": 1, "log_std": (-3.0, 0.0), "sampled": True},
    {"name": "arbitrary actions", "feat": 6, "act": 3, "rows": 5, "log_std": (-0.5, 0.5), "sampled": False},
    # Where the variance is mostly SB3's epsilon. The means are 0 here: a
    # noise of ~1e-6 added to a mean of ~1 would lose its digits to float32
    # (ours stores actions in float32, as SB3's rollout buffer does).
    {"name": "tiny features", "feat": 3, "act": 2, "rows": 4, "log_std": (-4.0, -2.0), "sampled": True, "scale": 1e-3,
     "mean_scale": 0.0},
]


def flat(t):
    return [float(v) for v in t.detach().reshape(-1)]


def main():
    dists = load_distributions()
    rng = np.random.default_rng(20261126)
    th.manual_seed(20261126)
    out = []
    for c in CASES:
        feat, act, rows = c["feat"], c["act"], c["rows"]
        # Features as a Tanh layer gives them; means of the size of actions.
        features = th.tensor(np.tanh(rng.normal(0, 1, (rows, feat))) * c.get("scale", 1.0))
        mean = th.tensor(rng.normal(0, 0.7, (rows, act)) * c.get("mean_scale", 1.0), requires_grad=True)
        log_std = th.nn.Parameter(th.tensor(rng.uniform(*c["log_std"], (feat, act))))
        d = dists.StateDependentNoiseDistribution(act)
        d.sample_weights(log_std, batch_size=rows)
        expl = d.exploration_matrices if rows > 1 else d.exploration_mat.unsqueeze(0)
        d.proba_distribution(mean, log_std, features)
        if c["sampled"]:
            actions = d.sample().detach()
        else:
            actions = th.tensor(rng.normal(0, 2, (rows, act)))
        logp = d.log_prob(actions)
        ent = d.entropy()
        # A loss with a different weight on every row's log-probability and
        # entropy, so that each gradient term is checked on its own.
        wl = th.tensor(rng.normal(0, 1, rows))
        we = th.tensor(rng.normal(0, 1, rows))
        loss = (wl * logp).sum() + (we * ent).sum()
        loss.backward()
        out.append({
            "name": c["name"], "feat": feat, "act": act, "rows": rows,
            "features": flat(features), "mean": flat(mean), "log_std": flat(log_std),
            "expl": flat(expl), "actions": flat(actions),
            "logp": flat(logp), "entropy": flat(ent),
            "w_logp": flat(wl), "w_entropy": flat(we),
            "grad_mean": flat(mean.grad), "grad_log_std": flat(log_std.grad),
        })
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gsde.json")
    with open(path, "w") as f:
        json.dump({"source": "stable-baselines3 2.9.0a4 common/distributions.py StateDependentNoiseDistribution, torch "
                   + th.__version__ + ", float64", "cases": out}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
