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

import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ppo_rule import collect, sequence_fields, snapshot, update, write_cases  # noqa: E402

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
    data = collect(actor, critic, log_std, obs, h0, valid, g, -0.2)
    steps, after_first = update(actor, critic, log_std, params, data, hp, g, epochs)
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
        **sequence_fields(init, lengths, valid, obs, data, h0, steps, after_first, params),
    }


def main():
    write_cases(os.path.dirname(os.path.abspath(__file__)), "gru_bptt", 29, make)


if __name__ == "__main__":
    main()
