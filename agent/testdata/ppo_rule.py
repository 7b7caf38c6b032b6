"""The recurrent PPO update rule the generators of this folder share
(gen_ppo_gru.py, gen_ppo_transformer.py), as ../shared/testdata/ppo's README
states it: per-minibatch advantage normalisation over the valid steps (N - 1
std), the clipped surrogate, the clipped value loss, one global gradient-norm
clip, Adam with eps 1e-5; minibatches of 4 whole sequences."""

import json
import os

import torch
from torch import nn
from torch.distributions import Normal


def tensor(t):
    return {"shape": list(t.shape), "data": t.detach().reshape(-1).tolist()}


def snapshot(params):
    return {n: tensor(p) for n, p in params.items()}


def weighted_terms(logp, old_logp, adv, v, old_v, ret, ent, w, hp):
    """The PPO losses and statistics, every mean over the steps where w = 1."""
    n = w.sum()

    def avg(t):
        return (t * w).sum() / n

    mu = avg(adv)
    sd = torch.sqrt((((adv - mu) ** 2) * w).sum() / (n - 1))
    a = (adv - mu) / (sd + 1e-8)
    log_r = logp - old_logp
    r = torch.exp(log_r)
    c = hp["clip_coef"]
    pg = avg(torch.maximum(-a * r, -a * torch.clamp(r, 1 - c, 1 + c)))
    v_clipped = old_v + torch.clamp(v - old_v, -c, c)
    vl = 0.5 * avg(torch.maximum((v - ret) ** 2, (v_clipped - ret) ** 2))
    e = avg(ent)
    loss = pg - hp["ent_coef"] * e + hp["vf_coef"] * vl
    stats = {"pg_loss": pg.item(), "v_loss": vl.item(), "entropy": e.item(), "loss": loss.item(),
             "approx_kl": avg((r - 1) - log_r).item(), "clipfrac": avg(((r - 1).abs() > c).double()).item()}
    return loss, stats


def collect(actor, critic, log_std, obs, states, valid, g, adv_shift):
    """The rollout the update learns from: actions sampled from the initial policy (zeros
    on padding), their log-probabilities, the critic's values, advantages drawn from g
    (1.5 standard normals shifted by adv_shift) and returns = values + advantages; with
    obs, valid and the states, the update's data."""
    L, S = valid.shape
    with torch.no_grad():
        mean = actor(obs, states["actor_h0"])
        pi = Normal(mean, log_std.exp().expand_as(mean))
        actions = pi.sample() * valid.unsqueeze(2)
        old_logp = pi.log_prob(actions).sum(2) * valid
        old_values = critic(obs, states["critic_h0"]).squeeze(2) * valid
        advantages = (1.5 * torch.randn(L, S, generator=g) + adv_shift) * valid
        returns = (old_values + advantages) * valid
    return dict(obs=obs, actions=actions, old_logp=old_logp, old_values=old_values,
                advantages=advantages, returns=returns, valid=valid, **states)


def update(actor, critic, log_std, params, data, hp, g, epochs=3):
    """Runs the update over data (obs, actions, old_logp, old_values, advantages,
    returns, valid, and the states "actor_h0", "critic_h0") with the permutations
    drawn from g; returns each minibatch's statistics and the parameters after
    the first step."""
    opt = torch.optim.Adam(list(params.values()), lr=hp["lr"], eps=1e-5)
    S = data["obs"].shape[1]
    steps, after_first = [], None
    for epoch in range(epochs):
        perm = torch.randperm(S, generator=g)
        for k in range(0, S, 4):
            b = perm[k:k + 4]
            mean = actor(data["obs"][:, b], data["actor_h0"][b])
            pi = Normal(mean, log_std.exp().expand_as(mean))
            logp, ent = pi.log_prob(data["actions"][:, b]).sum(2), pi.entropy().sum(2)
            v = critic(data["obs"][:, b], data["critic_h0"][b]).squeeze(2)
            loss, stats = weighted_terms(logp, data["old_logp"][:, b], data["advantages"][:, b], v,
                                         data["old_values"][:, b], data["returns"][:, b], ent,
                                         data["valid"][:, b], hp)
            opt.zero_grad()
            loss.backward()
            stats["grad_norm_before_clip"] = float(nn.utils.clip_grad_norm_(list(params.values()), hp["max_grad_norm"]))
            opt.step()
            stats.update(epoch=epoch, sequences=[int(i) for i in b])
            steps.append(stats)
            if after_first is None:
                after_first = snapshot(params)
    return steps, after_first


def sequence_fields(init, lengths, valid, obs, data, states, steps, after_first, params):
    """The fields every sequence replay records after its description: the start, the
    rollout, the recurrent states at the sequence starts and what each update step did."""
    return {
        "init_params": init, "lengths": lengths, "valid": tensor(valid),
        "obs": tensor(obs), "actions": tensor(data["actions"]), "old_logprobs": tensor(data["old_logp"]),
        "old_values": tensor(data["old_values"]), "advantages": tensor(data["advantages"]), "returns": tensor(data["returns"]),
        **{k: tensor(v) for k, v in states.items()},
        "steps": steps, "params_after_first_step": after_first, "final_params": snapshot(params),
    }


def write_cases(here, prefix, seed, make):
    """Writes the replay without clipping and the one with it (a learning rate large
    enough that the ratio clips) as <prefix>.json and <prefix>_clip.json."""
    for tag, lr in (("", 3e-3), ("_clip", 2e-2)):
        hp = {"lr": lr, "clip_coef": 0.2, "ent_coef": 0.01, "vf_coef": 0.5, "max_grad_norm": 0.5}
        rec = make(prefix + tag, seed, hp)
        with open(os.path.join(here, rec["name"] + ".json"), "w") as f:
            json.dump(rec, f)
        print(rec["name"], "clip fraction per step", [round(s["clipfrac"], 3) for s in rec["steps"]])
