"""Writes value_scale.json: what skrl's PPO does to the critic's outputs
and the value targets with value_preprocessor = RunningStandardScaler, on
recorded critic outputs and returns, for agent's
TestValueNormalisationMatchesSkrl.

    apt-get install python3-torch python3-numpy
    SKRL_SRC=/path/to/skrl /usr/bin/python3 agent/testdata/gen_value_scale.py

SKRL_SRC as for gen_kl_adaptive.py (release 2.0.0, c29ced63). Only
resources/preprocessors/torch/running_standard_scaler.py is loaded, with
stand-ins for the skrl and gymnasium modules it imports (the device and the
size, which are given here). Per rollout, as skrl's PPO: the critic's
outputs are de-standardised (inverse) for GAE, then the rollout's values
and then its returns are standardised with train=True.
"""

import importlib.util
import json
import os
import sys
import types

import numpy as np
import torch


def load_scaler():
    sys.modules["gymnasium"] = types.ModuleType("gymnasium")
    sys.modules["gymnasium"].Space = object
    skrl = types.ModuleType("skrl")
    skrl.config = types.SimpleNamespace(torch=types.SimpleNamespace(parse_device=lambda d: torch.device("cpu")))
    sys.modules["skrl"] = skrl
    for name in ["skrl.utils", "skrl.utils.spaces"]:
        sys.modules[name] = types.ModuleType(name)
    sp = types.ModuleType("skrl.utils.spaces.torch")
    sp.compute_space_size = lambda size, occupied_size=True: size
    sys.modules["skrl.utils.spaces.torch"] = sp
    path = os.path.join(os.environ["SKRL_SRC"], "skrl", "resources", "preprocessors", "torch", "running_standard_scaler.py")
    spec = importlib.util.spec_from_file_location("skrl_running_standard_scaler", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.RunningStandardScaler


def main():
    Scaler = load_scaler()
    rng = np.random.default_rng(20261126)
    cases = []
    # Pendulum-like returns (around -300, spread 200) and small ones; the
    # critic's outputs drift, some beyond the ±5 clip.
    for name, scale, shift, rollouts, size in (("large", 200.0, -300.0, 12, 64), ("small", 0.5, 0.2, 8, 33)):
        s = Scaler(1)
        steps = []
        for k in range(rollouts):
            critic = rng.normal(0.5 * k / rollouts, 2.0, size).astype(np.float32)
            returns = (rng.normal(0, 1, size) * scale + shift * (1 + k / rollouts)).astype(np.float32)
            x = torch.tensor(critic).unsqueeze(1)
            values = s(x, inverse=True)
            stored_values = s(values, train=True)
            stored_returns = s(torch.tensor(returns).unsqueeze(1), train=True)
            steps.append({"critic": critic.tolist(), "returns": returns.tolist(),
                          "values": values.squeeze(1).tolist(), "stored_values": stored_values.squeeze(1).tolist(),
                          "stored_returns": stored_returns.squeeze(1).tolist(),
                          "mean": float(s.running_mean), "var": float(s.running_variance), "count": float(s.current_count)})
        cases.append({"name": name, "rollouts": steps})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "value_scale.json")
    with open(path, "w") as f:
        json.dump({"source": "skrl 2.0.0 resources/preprocessors/torch/running_standard_scaler.py, torch " + torch.__version__,
                   "cases": cases}, f)
        f.write("\n")


if __name__ == "__main__":
    main()
