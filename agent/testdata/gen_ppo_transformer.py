"""Writes transformer_bptt.json and transformer_bptt_clip.json: one complete
recurrent PPO update of an agent with a causal Transformer encoder, computed by
PyTorch in float64, for agent's TestUpdateReplaysPyTorchReferences (beside the
LSTM and GRU cases, in the same format and by the same update rule as the
shared references' README states it).

    apt-get install python3-torch python3-numpy
    /usr/bin/python3 agent/testdata/gen_ppo_transformer.py

Actor and critic each own a network obs 3 -> window of the last K = 4 inputs ->
embedding to width 8 plus learned positions -> one pre-LayerNorm Transformer
layer (2 heads, MLP 12, ReLU; the layer nn/testdata/gen_transformer.py holds
against torch.nn.TransformerEncoderLayer) -> LayerNorm of the newest position ->
Linear 8 -> tanh -> Linear out; the actor's out is the mean of Box(2) actions
with a state-independent log-std (initially -0.3). A window's positions before
the episode's start are cut: no query attends to them. Each of 8 sequences of
at most 4 steps starts from a stored state per network (actor_h0, critic_h0):
the K - 1 inputs before the sequence, oldest first, then how many of them are
the episode's (0 to 3). Tensors are named as in evolve's agent files, matrices
in PyTorch's [out, in] layout (pos is [K, width] as stored). 3 epochs x 2
minibatches of 4 whole sequences; every average over the valid steps only.
Made with torch 1.13 (Debian's python3-torch).
"""

import math
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ppo_rule import collect, sequence_fields, snapshot, update, write_cases  # noqa: E402

torch.set_default_dtype(torch.float64)
K, D, H, F = 4, 8, 2, 12


class TransformerNet(nn.Module):
    """obs -> causal Transformer over the last K inputs -> LayerNorm -> Linear -> tanh -> Linear."""

    def __init__(self, obs_dim, latent, out, g):
        super().__init__()
        shapes = {"embed.weight": (D, obs_dim), "embed.bias": (D,), "pos": (K, D),
                  "0.attn.norm.weight": (D,), "0.attn.norm.bias": (D,),
                  "0.attn.q.weight": (D, D), "0.attn.q.bias": (D,), "0.attn.k.weight": (D, D), "0.attn.k.bias": (D,),
                  "0.attn.v.weight": (D, D), "0.attn.v.bias": (D,), "0.attn.out.weight": (D, D), "0.attn.out.bias": (D,),
                  "0.mlp.norm.weight": (D,), "0.mlp.norm.bias": (D,),
                  "0.mlp.0.weight": (F, D), "0.mlp.0.bias": (F,), "0.mlp.1.weight": (D, F), "0.mlp.1.bias": (D,),
                  "norm.weight": (D,), "norm.bias": (D,)}
        self.p = nn.ParameterDict()
        for name, shape in shapes.items():
            v = 0.4 * torch.randn(shape, generator=g)
            if name.endswith("norm.weight"):
                v = v + 1
            self.p[name.replace(".", "_")] = nn.Parameter(v)
        self.latent = nn.Linear(D, latent)
        self.out = nn.Linear(latent, out)

    def w(self, name):
        return self.p[name.replace(".", "_")]

    def encode(self, window, first):
        """window [rows, K, obs] (zeros before first), first [rows] -> [rows, D]."""
        rows = window.shape[0]
        h = window @ self.w("embed.weight").T + self.w("embed.bias") + self.w("pos")
        ln = lambda v, n: nn.functional.layer_norm(v, (D,), self.w(n + ".weight"), self.w(n + ".bias"), 1e-5)
        lin = lambda v, n: v @ self.w(n + ".weight").T + self.w(n + ".bias")
        a = ln(h, "0.attn.norm")
        heads = lambda v: v.reshape(rows, K, H, D // H).transpose(1, 2)
        s = heads(lin(a, "0.attn.q")) @ heads(lin(a, "0.attn.k")).transpose(2, 3) / math.sqrt(D // H)
        j = torch.arange(K)
        allowed = (j[None, None, :] <= j[None, :, None]) & (j[None, None, :] >= first[:, None, None])
        # A query before first attends to itself only (its output is never read).
        allowed = allowed | ((j[None, :, None] < first[:, None, None]) & (j[None, None, :] == j[None, :, None]))
        s = s.masked_fill(~allowed.unsqueeze(1), float("-inf"))
        o = (torch.softmax(s, dim=-1) @ heads(lin(a, "0.attn.v"))).transpose(1, 2).reshape(rows, K, D)
        h = h + lin(o, "0.attn.out")
        h = h + lin(torch.relu(lin(ln(h, "0.mlp.norm"), "0.mlp.0")), "0.mlp.1")
        return ln(h[:, K - 1], "norm")

    def forward(self, x, state):
        """x [L, B, obs] time-major from state [B, (K-1)*obs + 1] -> out [L, B, out]."""
        L, B, n_in = x.shape
        past = state[:, :-1].reshape(B, K - 1, n_in)
        count = state[:, -1].long()
        outs = []
        for t in range(L):
            seq = torch.cat([past, x[: t + 1].transpose(0, 1)], dim=1)  # [B, K-1+t+1, obs]
            window = seq[:, -K:]
            first = torch.clamp((K - 1) - (count + t), min=0)  # inputs before the window's valid ones
            keep = (torch.arange(K)[None, :] >= first[:, None]).unsqueeze(2).to(x.dtype)
            outs.append(self.out(torch.tanh(self.latent(self.encode(window * keep, first)))))
        return torch.stack(outs)

    def tensors(self, prefix):
        named = {f"{prefix}.encoder.transformer.{n.replace('_', '.')}": p for n, p in self.p.items()}
        named.update({f"{prefix}.latent.{n}": p for n, p in self.latent.named_parameters()})
        named.update({f"{prefix}.out.{n}": p for n, p in self.out.named_parameters()})
        return named


def make(name, seed, hp, epochs=3):
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    obs_dim, latent, act = 3, 8, 2
    actor, critic = TransformerNet(obs_dim, latent, act, g), TransformerNet(obs_dim, latent, 1, g)
    log_std = nn.Parameter(torch.full((1, act), -0.3))
    params = {**actor.tensors("actor"), **critic.tensors("critic"), "actor.log_std": log_std}
    init = snapshot(params)
    L, S = 4, 8
    lengths = [4, 3, 4, 2, 4, 4, 1, 4]
    valid = torch.zeros(L, S)
    for s, n in enumerate(lengths):
        valid[:n, s] = 1
    obs = torch.randn(L, S, obs_dim, generator=g) * valid.unsqueeze(2)
    states = {}
    for k in ("actor_h0", "critic_h0"):
        st = torch.randn(S, (K - 1) * obs_dim + 1, generator=g)
        st[:, -1] = torch.tensor([0, 3, 1, 2, 3, 0, 3, 2], dtype=torch.float64)
        states[k] = st
    data = collect(actor, critic, log_std, obs, states, valid, g, 0.1)
    steps, after_first = update(actor, critic, log_std, params, data, hp, g, epochs)
    return {
        "name": name, "action_kind": "box", "obs_dim": obs_dim, "action": act,
        "network": TransformerNet.__doc__,
        "hyperparameters": dict(hp, adam_eps=1e-5, bptt="4 whole sequences per minibatch, padded to 4 steps"),
        **sequence_fields(init, lengths, valid, obs, data, states, steps, after_first, params),
    }


def main():
    write_cases(os.path.dirname(os.path.abspath(__file__)), "transformer_bptt", 31, make)


if __name__ == "__main__":
    main()
