"""Writes transformer_layer.json: torch.nn.TransformerEncoderLayer with
norm_first=True (pre-LayerNorm), ReLU, no dropout, run in float64 over windows
with a causal mask and, per window, a first valid position (keys before it
masked, as an episode start cuts the window), its output and the gradients of
loss = sum(z * R) over the valid positions, for nn's
TestTransformerLayerMatchesPyTorch.

    apt-get install python3-torch python3-numpy
    /usr/bin/python3 nn/testdata/gen_transformer.py

Tensors are {"shape", "data"} row-major, PyTorch's layouts: self_attn.in_proj_weight
[3D, D] (Wq, Wk, Wv stacked, each [out, in]), in_proj_bias [3D],
out_proj.weight [D, D], linear1.weight [F, D], linear2.weight [D, F], norm1 and
norm2 weight and bias [D]. x and z are [windows, K, D]. Positions before a
window's first valid one attend only to themselves here (PyTorch's softmax needs a
key), and their rows of z and R are zeroed: nothing after reads them. Made with
torch 1.13 (Debian's python3-torch).
"""

import json
import os

import torch as th

th.set_default_dtype(th.float64)


def tensor(t):
    return {"shape": list(t.shape), "data": t.detach().reshape(-1).tolist()}


def make(seed, D=8, H=2, F=12, K=5, W=3, first=(0, 2, 1)):
    g = th.Generator().manual_seed(seed)
    layer = th.nn.TransformerEncoderLayer(D, H, dim_feedforward=F, dropout=0.0, activation="relu",
                                          batch_first=True, norm_first=True)
    with th.no_grad():
        for p in layer.parameters():
            p.copy_(th.randn(p.shape, generator=g) * 0.4)
    x = th.randn(W, K, D, generator=g, requires_grad=True)
    R = th.randn(W, K, D, generator=g)
    valid = th.ones(W, K)
    mask = th.zeros(W * H, K, K)  # additive, per window and head
    for b, f in enumerate(first):
        valid[b, :f] = 0
        for i in range(K):
            for j in range(K):
                # A position before the first valid one attends to itself only, so
                # that PyTorch's softmax has a key (its row is dropped from the loss).
                allowed = j == i if i < f else f <= j <= i
                if not allowed:
                    mask[b * H:(b + 1) * H, i, j] = float("-inf")
    z = layer(x, src_mask=mask)
    z = th.where(valid.unsqueeze(2) > 0, z, th.zeros_like(z))
    loss = (z * R * valid.unsqueeze(2)).sum()
    loss.backward()
    named = dict(layer.named_parameters())
    return {
        "sizes": {"width": D, "heads": H, "mlp": F, "k": K, "windows": W},
        "first": list(first), "x": tensor(x), "r": tensor(R * valid.unsqueeze(2)), "z": tensor(z),
        "params": {n: tensor(p) for n, p in named.items()},
        "grad_params": {n: tensor(p.grad) for n, p in named.items()},
        "grad_x": tensor(x.grad),
    }


def main():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "transformer_layer.json")
    with open(path, "w") as f:
        json.dump(make(3), f)
    print("wrote", path)


if __name__ == "__main__":
    main()
