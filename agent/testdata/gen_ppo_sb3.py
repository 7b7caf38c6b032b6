"""Writes ppo_sde_mse.json and ppo_sde_mse_clip.json: complete PPO updates by
Stable-Baselines3's rule with gSDE, in PyTorch float64, for agent's
TestUpdateReplaysSB3Rule. The format is that of ../../shared/testdata/ppo
(its README), with the same networks as its "continuous" case
(obs 3 → 16 → tanh → 16 → tanh → Box(2) means; the critic alike → 1), and two
differences, SB3's defaults:

- the Box policy is gSDE: SB3's StateDependentNoiseDistribution over the
  actor's features (its second tanh layer's output, 16 wide), with a log-std
  matrix actor.log_std [16, 2]; the actions were sampled by gSDE itself;
- the value loss is F.mse_loss(returns, values): unclipped, without a ½.

Everything else is SB3's PPO.train: per-minibatch advantage normalisation
with the N−1 std, the clipped surrogate, entropy loss −mean(entropy),
loss = pg + ent_coef·ent_loss + vf_coef·v_loss, one global gradient-norm
clip, Adam with eps 1e-5.

    apt-get install python3-torch python3-numpy
    SB3_SRC=/path/to/stable-baselines3 /usr/bin/python3 agent/testdata/gen_ppo_sb3.py

SB3_SRC as for gen_gsde.py (which this reuses to load SB3's distributions).
"""

import json
import os
import sys

import numpy as np
import torch as th
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_gsde import load_distributions  # noqa: E402

th.set_default_dtype(th.float64)

N, EPOCHS, MB = 32, 3, 8
OBS, ACT, HID = 3, 2, 16


def mlp(out):
    return th.nn.Sequential(th.nn.Linear(OBS, HID), th.nn.Tanh(), th.nn.Linear(HID, HID), th.nn.Tanh(),
                            th.nn.Linear(HID, out))


def params(actor, critic, log_std):
    out = {}
    for net, name in ((actor, "actor"), (critic, "critic")):
        for k, i in enumerate((0, 2, 4)):
            out[f"{name}.{k}.weight"] = {"shape": list(net[i].weight.shape), "data": net[i].weight.detach().reshape(-1).tolist()}
            out[f"{name}.{k}.bias"] = {"shape": list(net[i].bias.shape), "data": net[i].bias.detach().tolist()}
    out["actor.log_std"] = {"shape": list(log_std.shape), "data": log_std.detach().reshape(-1).tolist()}
    return out


def policy(dists, actor, log_std, obs):
    """The means and SB3's gSDE distribution of the actor on obs."""
    features = actor[:4](obs)
    mean = actor[4](features)
    d = dists.StateDependentNoiseDistribution(ACT)
    d.proba_distribution(mean, log_std, features)
    return d


def make(dists, name, lr, seed):
    rng = np.random.default_rng(seed)
    th.manual_seed(seed)
    actor, critic = mlp(ACT), mlp(1)
    log_std = th.nn.Parameter(th.tensor(rng.uniform(-1.0, 0.0, (HID, ACT))))
    hyper = {"lr": lr, "clip_coef": 0.2, "ent_coef": 0.01, "vf_coef": 0.5, "max_grad_norm": 0.5, "adam_eps": 1e-5,
             "adv_norm": "per minibatch, (a-mean)/(std+1e-8), std with N-1",
             "value_loss": "F.mse_loss(returns, values): (v-R)^2, unclipped, no 1/2",
             "distribution": "gSDE: SB3 StateDependentNoiseDistribution(full_std, exp, features detached)",
             "grad_clip": "one global norm over all actor and critic parameters", "mask_fill": None}
    init = params(actor, critic, log_std)

    obs = th.tensor(rng.normal(0, 1, (N, OBS)))
    with th.no_grad():
        d = policy(dists, actor, log_std, obs)
        d.sample_weights(log_std, batch_size=N)
        actions = d.sample()
        old_logp = d.log_prob(actions)
        old_values = critic(obs).squeeze(1)
    adv = th.tensor(rng.normal(0, 1, N))
    returns = old_values + th.tensor(rng.normal(0, 2, N))  # far from the values: the critic moves

    opt = th.optim.Adam(list(actor.parameters()) + list(critic.parameters()) + [log_std], lr=lr, eps=1e-5)
    steps, after_first = [], None
    for epoch in range(EPOCHS):
        perm = rng.permutation(N)
        for start in range(0, N, MB):
            idx = perm[start:start + MB]
            a = adv[idx]
            a = (a - a.mean()) / (a.std() + 1e-8)
            d = policy(dists, actor, log_std, obs[idx])
            logp = d.log_prob(actions[idx])
            ent = d.entropy()
            log_ratio = logp - old_logp[idx]
            ratio = th.exp(log_ratio)
            pg = -th.min(a * ratio, a * th.clamp(ratio, 0.8, 1.2)).mean()
            values = critic(obs[idx]).squeeze(1)
            v_loss = F.mse_loss(returns[idx], values)
            ent_loss = -ent.mean()
            loss = pg + hyper["ent_coef"] * ent_loss + hyper["vf_coef"] * v_loss
            opt.zero_grad()
            loss.backward()
            norm = th.nn.utils.clip_grad_norm_(list(actor.parameters()) + list(critic.parameters()) + [log_std], 0.5)
            opt.step()
            with th.no_grad():
                kl = ((ratio - 1) - log_ratio).mean()
                clipfrac = ((ratio - 1).abs() > 0.2).double().mean()
            steps.append({"epoch": epoch, "indices": [int(i) for i in idx], "pg_loss": pg.item(), "v_loss": v_loss.item(),
                          "entropy": ent.mean().item(), "loss": loss.item(), "approx_kl": kl.item(),
                          "clipfrac": clipfrac.item(), "grad_norm_before_clip": norm.item()})
            if after_first is None:
                after_first = params(actor, critic, log_std)
    return {
        "name": name, "action_kind": "continuous", "obs_dim": OBS, "action": ACT, "hidden": HID, "activation": "tanh",
        "hyperparameters": hyper, "init_params": init,
        "obs": obs.tolist(), "actions": actions.tolist(), "action_masks": None,
        "old_logprobs": old_logp.tolist(), "old_values": old_values.tolist(),
        "advantages": adv.tolist(), "returns": returns.tolist(), "steps": steps,
        "params_after_first_step": after_first, "final_params": params(actor, critic, log_std),
        "source": "stable-baselines3 2.9.0a4 distributions.py and PPO.train's rule, torch " + th.__version__ + ", float64",
    }


def main():
    dists = load_distributions()
    here = os.path.dirname(os.path.abspath(__file__))
    for name, lr, seed in (("ppo_sde_mse", 3e-3, 1), ("ppo_sde_mse_clip", 2e-2, 2)):
        with open(os.path.join(here, name + ".json"), "w") as f:
            json.dump(make(dists, name, lr, seed), f)
            f.write("\n")


if __name__ == "__main__":
    main()
