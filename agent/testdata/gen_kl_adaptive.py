"""Writes kl_adaptive.json: learning-rate sequences of skrl's KLAdaptiveLR
(the torch scheduler, stepped once per epoch with a recorded KL) for
agent's TestKLAdaptLRMatchesSkrl.

    apt-get install python3-torch python3-numpy python3-packaging
    SKRL_SRC=/path/to/skrl /usr/bin/python3 agent/testdata/gen_kl_adaptive.py

SKRL_SRC is a checkout of github.com/Toni-SM/skrl (the directory holding
the package skrl); the file was made with its release 2.0.0 (c29ced63).
"""

import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.environ["SKRL_SRC"])
from skrl.resources.schedulers.torch import KLAdaptiveLR  # noqa: E402

# Each case: the scheduler's settings (None: skrl's default), the starting
# lr, and a KL stream that crosses both thresholds and holds long enough to
# reach the bounds.
CASES = [
    {"name": "defaults", "lr": 3e-4, "kwargs": {}},
    {"name": "threshold 0.02", "lr": 3e-5, "kwargs": {"kl_threshold": 0.02}},
    {"name": "tight bounds", "lr": 1e-3,
     "kwargs": {"kl_threshold": 0.005, "min_lr": 2e-4, "max_lr": 2e-3, "kl_factor": 3.0, "lr_factor": 1.2}},
]


def kl_stream(rng, n):
    """KL values log-uniform over 1e-5 to 1, in runs of random length so
    that the rate climbs and falls to its bounds."""
    out = []
    while len(out) < n:
        level = 10 ** rng.uniform(-5, 0)
        out += [level * 10 ** rng.normal(0, 0.2) for _ in range(rng.integers(1, 25))]
    return out[:n]


def main():
    rng = np.random.default_rng(20261126)
    out = []
    for case in CASES:
        param = torch.nn.Parameter(torch.zeros(1))
        opt = torch.optim.SGD([param], lr=case["lr"])
        sched = KLAdaptiveLR(opt, **case["kwargs"])
        kls = kl_stream(rng, 300)
        lrs = []
        for kl in kls:
            sched.step(kl)
            lrs.append(opt.param_groups[0]["lr"])
        settings = {"kl_threshold": sched.kl_threshold, "kl_factor": sched._kl_factor, "lr_factor": sched._lr_factor,
                    "min_lr": sched.min_lr, "max_lr": sched.max_lr}
        out.append({"name": case["name"], "lr": case["lr"], **settings, "kl": kls, "lrs": lrs})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kl_adaptive.json")
    with open(path, "w") as f:
        json.dump({"source": "skrl 2.0.0 skrl/resources/schedulers/torch/kl_adaptive.py, torch " + torch.__version__,
                   "cases": out}, f, indent=1)
        f.write("\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
