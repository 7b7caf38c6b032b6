"""Writes gru_bptt.json and gru_bptt_clip.json: one complete recurrent PPO update
of a GRU agent computed by PyTorch in float64, for agent's
TestUpdateReplaysPyTorchReferences (the GRU cases beside the LSTM ones of
../shared/testdata/ppo, in the same format and by the same update rule, written
out in that folder's README).

    apt-get install python3-torch python3-numpy
    /usr/bin/python3 agent/testdata/gen_ppo_gru.py

Actor and critic each own a network obs 3 -> GRU 8 (1 layer, PyTorch's
torch.nn.GRU: gates r, z, n, two biases) -> Linear 8 -> tanh -> Linear out; the
actor's out is the mean of Box(2) actions with a state-independent log-std
(initially -0.3). 8 sequences of at most 4 steps, time-major, padded where an
episode ended early, each with a stored initial state per network
(actor_h0, critic_h0: a GRU has no cell state). 3 epochs x 2 minibatches of 4
whole sequences; every average runs over the valid steps only. Made with torch
1.13 (Debian's python3-torch).
"""

import json
import os

import torch
from torch import nn
from torch.distributions import Normal

torch.set_default_dtype(torch.float64)


class GRUNet(nn.Module):
    """obs -> GRU(hidden, 1 layer) -> Linear(latent) -> tanh -> Linear(out), over whole sequences."""

    def __init__(self, obs_dim, hidden, latent, out):
        super().__init__()
        self.gru = nn.GRU(obs_dim, hidden, 1)
        self.latent = nn.Linear(hidden, latent)
        self.out = nn.Linear(latent, out)

    def forward(self, x, h0):
        y, _ = self.gru(x, h0.unsqueeze(0))  # x [L, B, obs], h0 [B, hidden]
        return self.out(torch.tanh(self.latent(y)))

    def tensors(self, prefix):
        named = {f"gru.{n}": p for n, p in self.gru.named_parameters()}
        named.update({f"latent.{n}": p for n, p in self.latent.named_parameters()})
        named.update({f"out.{n}": p for n, p in self.out.named_parameters()})
        return {f"{prefix}.{n}": p for n, p in named.items()}


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


def make(name, seed, hp, epochs=3):
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    obs_dim, hidden, latent, act = 3, 8, 8, 2
    actor, critic = GRUNet(obs_dim, hidden, latent, act), GRUNet(obs_dim, hidden, latent, 1)
    log_std = nn.Parameter(torch.full((1, act), -0.3))
    params = {**actor.tensors("actor"), **critic.tensors("critic"), "actor.log_std": log_std}
    init = snapshot(params)

    L, S = 4, 8
    lengths = [3, 4, 4, 1, 4, 2, 4, 4]
    valid = torch.zeros(L, S)
    for s, n in enumerate(lengths):
        valid[:n, s] = 1
    obs = torch.randn(L, S, obs_dim, generator=g) * valid.unsqueeze(2)
    h0 = {k: 0.5 * torch.randn(S, hidden, generator=g) for k in ("actor_h0", "critic_h0")}
    with torch.no_grad():
        mean = actor(obs, h0["actor_h0"])
        pi = Normal(mean, log_std.exp().expand_as(mean))
        actions = pi.sample() * valid.unsqueeze(2)
        old_logp = pi.log_prob(actions).sum(2) * valid
        old_values = critic(obs, h0["critic_h0"]).squeeze(2) * valid
        advantages = (1.5 * torch.randn(L, S, generator=g) - 0.2) * valid
        returns = (old_values + advantages) * valid

    opt = torch.optim.Adam(list(params.values()), lr=hp["lr"], eps=1e-5)
    steps, after_first = [], None
    for epoch in range(epochs):
        perm = torch.randperm(S, generator=g)
        for k in range(0, S, 4):
            b = perm[k:k + 4]
            mean = actor(obs[:, b], h0["actor_h0"][b])
            pi = Normal(mean, log_std.exp().expand_as(mean))
            logp, ent = pi.log_prob(actions[:, b]).sum(2), pi.entropy().sum(2)
            v = critic(obs[:, b], h0["critic_h0"][b]).squeeze(2)
            loss, stats = weighted_terms(logp, old_logp[:, b], advantages[:, b], v, old_values[:, b],
                                         returns[:, b], ent, valid[:, b], hp)
            opt.zero_grad()
            loss.backward()
            stats["grad_norm_before_clip"] = float(nn.utils.clip_grad_norm_(list(params.values()), hp["max_grad_norm"]))
            opt.step()
            stats.update(epoch=epoch, sequences=[int(i) for i in b])
            steps.append(stats)
            if after_first is None:
                after_first = snapshot(params)
    return {
        "name": name, "action_kind": "box", "obs_dim": obs_dim, "action": act,
        "network": GRUNet.__doc__ + " Gates in PyTorch's order r, z, n; two biases.",
        "hyperparameters": dict(hp, adam_eps=1e-5,
                                adv_norm="per minibatch over valid steps, (a-mean)/(std+1e-8), std with N-1",
                                value_clip="0.5*mean(max((v-R)^2, (v_old+clip(v-v_old,±clip_coef)-R)^2))",
                                grad_clip="one global norm over all actor and critic parameters (log_std included)",
                                bptt="each minibatch holds 4 whole sequences, padded to 4 steps; averages over valid steps only"),
        "weight_layout": "PyTorch's: GRU weight_ih [3H, in], weight_hh [3H, H], gate blocks r, z, n; Linear weight [out, in]",
        "sequence_layout": "time-major: obs [L, S, obs_dim], every other per-step field [L, S]; valid[t][s] = 1 for real steps",
        "init_params": init, "lengths": lengths, "valid": tensor(valid),
        "obs": tensor(obs), "actions": tensor(actions), "old_logprobs": tensor(old_logp),
        "old_values": tensor(old_values), "advantages": tensor(advantages), "returns": tensor(returns),
        **{k: tensor(v) for k, v in h0.items()},
        "steps": steps, "params_after_first_step": after_first, "final_params": snapshot(params),
    }


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for tag, lr in (("", 3e-3), ("_clip", 2e-2)):
        hp = {"lr": lr, "clip_coef": 0.2, "ent_coef": 0.01, "vf_coef": 0.5, "max_grad_norm": 0.5}
        rec = make("gru_bptt" + tag, 29, hp)
        with open(os.path.join(here, rec["name"] + ".json"), "w") as f:
            json.dump(rec, f)
        print(rec["name"], "clip fraction per step", [round(s["clipfrac"], 3) for s in rec["steps"]])


if __name__ == "__main__":
    main()
