"""Writes vtrace.json: V-trace targets and policy-gradient advantages on
recorded log importance weights, rewards, values and episode ends, for
buffer's TestVTraceMatchesTorchBeast.

    apt-get install python3-torch python3-numpy
    TORCHBEAST_SRC=/path/to/torchbeast /usr/bin/python3 buffer/testdata/gen_vtrace.py

TORCHBEAST_SRC is a checkout of facebookresearch/torchbeast (checked with
0af07b05); its torchbeast/core/vtrace.py (IMPALA's from_importance_weights
ported to PyTorch) is loaded as it is. That function has IMPALA's trace
clip c̄ = 1 and no λ, so the cases with another c̄ or λ are computed from
the paper's sum (Espeholt et al. 2018, eq. 1, with c_i = λ·min(c̄, ρ_i)),
which is first checked against torchbeast on the cases both can compute.

Episode ends as the Go buffer keeps them: a terminated step bootstraps 0, a
truncated one the value of its final observation, the rollout's last step
the value of the next observation. torchbeast takes one discount per step,
so a truncated step becomes reward r + γ·V(final) with discount 0, which
gives the same temporal difference and advantage and cuts the trace.
"""

import importlib.util
import json
import os

import numpy as np
import torch


def load_vtrace():
    path = os.path.join(os.environ["TORCHBEAST_SRC"], "torchbeast", "core", "vtrace.py")
    spec = importlib.util.spec_from_file_location("tb_vtrace", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def paper_sum(d, gamma, lam, rho_clip, c_clip):
    """v_s = V(x_s) + sum_t gamma^(t-s) (prod_{i<t} c_i) delta_t within the
    episode, and the advantages, as plain double loops in float64."""
    T, B = d["rewards"].shape
    rho = np.exp(d["log_rhos"].astype(np.float64))
    V = d["values"].astype(np.float64)
    r = d["rewards"].astype(np.float64)
    nxt = np.zeros((T, B))
    cut = np.zeros((T, B), dtype=bool)
    for t in range(T):
        for b in range(B):
            if d["terminated"][t, b]:
                nxt[t, b], cut[t, b] = 0.0, True
            elif d["truncated"][t, b]:
                nxt[t, b], cut[t, b] = d["final_values"][t, b], True
            elif t == T - 1:
                nxt[t, b], cut[t, b] = d["last_values"][b], True
            else:
                nxt[t, b] = V[t + 1, b]
    delta = np.minimum(rho_clip, rho) * (r + gamma * nxt - V)
    c = lam * np.minimum(c_clip, rho)
    vs = np.zeros((T, B))
    for b in range(B):
        for s in range(T):
            total, weight = 0.0, 1.0
            for t in range(s, T):
                total += weight * delta[t, b]
                if cut[t, b]:
                    break
                weight *= gamma * c[t, b]
            vs[s, b] = V[s, b] + total
    vnext = np.where(cut, nxt, np.vstack([vs[1:], np.zeros((1, B))]))
    adv = np.minimum(rho_clip, rho) * (r + gamma * vnext - V)
    return vs, adv


def torchbeast(tb, d, gamma, rho_clip):
    trunc = d["truncated"] & ~d["terminated"]
    rewards = d["rewards"].astype(np.float64) + np.where(trunc, gamma * d["final_values"].astype(np.float64), 0.0)
    discounts = np.where(d["terminated"] | trunc, 0.0, gamma)
    out = tb.from_importance_weights(
        log_rhos=torch.tensor(d["log_rhos"], dtype=torch.float64),
        discounts=torch.tensor(discounts, dtype=torch.float64),
        rewards=torch.tensor(rewards, dtype=torch.float64),
        values=torch.tensor(d["values"], dtype=torch.float64),
        bootstrap_value=torch.tensor(d["last_values"], dtype=torch.float64),
        clip_rho_threshold=rho_clip,
        clip_pg_rho_threshold=rho_clip,
    )
    return out.vs.numpy(), out.pg_advantages.numpy()


def data(rng, T, B):
    f32 = lambda x: np.asarray(x, dtype=np.float32)
    term = rng.random((T, B)) < 0.1
    trunc = (rng.random((T, B)) < 0.08) & ~term
    return {
        "log_rhos": f32(rng.normal(0, 0.7, (T, B))),
        "rewards": f32(rng.normal(0, 1, (T, B))),
        "values": f32(rng.normal(0, 1, (T, B))),
        "final_values": f32(np.where(trunc, rng.normal(0, 1, (T, B)), 0)),
        "last_values": f32(rng.normal(0, 1, B)),
        "terminated": term,
        "truncated": trunc,
    }


# name, gamma, lambda, rho clip, trace clip; torchbeast computes those with
# lambda 1 and trace clip 1.
CASES = [
    ("impala", 0.99, 1.0, 1.0, 1.0),
    ("impala_rho2", 0.9, 1.0, 2.0, 1.0),
    ("lambda_clips", 0.97, 0.9, 1.5, 0.8),
]


def main():
    tb = load_vtrace()
    rng = np.random.default_rng(29)
    out = []
    for name, gamma, lam, rho_clip, c_clip in CASES:
        d = data(rng, 16, 3)
        vs, adv = paper_sum(d, gamma, lam, rho_clip, c_clip)
        source = "paper"
        if lam == 1.0 and c_clip == 1.0:
            tvs, tadv = torchbeast(tb, d, gamma, rho_clip)
            assert np.allclose(vs, tvs, atol=1e-12) and np.allclose(adv, tadv, atol=1e-12), name
            vs, adv, source = tvs, tadv, "torchbeast"
        case = {"name": name, "source": source, "steps": 16, "envs": 3, "gamma": gamma, "lambda": lam,
                "rho_clip": rho_clip, "c_clip": c_clip}
        for k, v in d.items():
            case[k] = v.flatten().tolist() if v.dtype != bool else [bool(x) for x in v.flatten()]
        case["vs"], case["pg_advantages"] = vs.flatten().tolist(), adv.flatten().tolist()
        out.append(case)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vtrace.json")
    with open(path, "w") as f:
        json.dump({"generator": "buffer/testdata/gen_vtrace.py", "torchbeast": "0af07b05", "cases": out}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
