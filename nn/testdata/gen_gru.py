"""Writes gru_1layer.json and gru_2layer.json: torch.nn.GRU (float64) run over
time-major sequences with episode resets, its output and the gradients of
loss = sum(y * R), for nn's TestGRUMatchesPyTorch.

    apt-get install python3-torch python3-numpy
    /usr/bin/python3 nn/testdata/gen_gru.py

The format is that of ../shared/testdata/nets (see its README): sizes, x, R,
y, starts [steps, batch], h0 [layers, batch, hidden], params and grad_params
per gate in PyTorch's order r, z, n (gru.L.w_ih.r is the rows of
weight_ih_lL that make r, [hidden, in]), grad_x. A reset zeroes every layer's
state of a sequence before the step (the GRU is stepped one step at a time
with its state multiplied by 1 - starts[t]); no gradient flows through a reset
or into h0. Made with torch 1.13 (Debian's python3-torch).
"""

import json
import os

import torch as th

th.set_default_dtype(th.float64)
GATES = "rzn"


def tensor(t):
    return {"shape": list(t.shape), "data": t.detach().reshape(-1).tolist()}


def make(layers, seed, inp=5, hidden=8, steps=6, batch=3):
    g = th.Generator().manual_seed(seed)
    gru = th.nn.GRU(inp, hidden, num_layers=layers)
    with th.no_grad():
        for p in gru.parameters():
            p.copy_(th.rand(p.shape, generator=g) * 1.2 - 0.6)
    x = th.randn(steps, batch, inp, generator=g, requires_grad=True)
    starts = (th.rand(steps, batch, generator=g) < 0.25).double()
    starts[0, 0] = 1.0  # one sequence begins an episode at its first step
    h0 = th.randn(layers, batch, hidden, generator=g)
    R = th.randn(steps, batch, hidden, generator=g)

    h, ys = h0, []
    for t in range(steps):
        # Detached zeros where an episode starts: nothing flows back through a reset.
        keep = (1.0 - starts[t]).view(1, batch, 1)
        h = th.where(keep > 0, h, th.zeros_like(h))
        y, h = gru(x[t:t + 1], h)
        ys.append(y[0])
    y = th.stack(ys)
    loss = (y * R).sum()
    loss.backward()

    params, grads = {}, {}
    for L in range(layers):
        for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            p = getattr(gru, f"{kind}_l{L}")
            name = kind.replace("weight", "w").replace("bias", "b")
            for q, gate in enumerate(GATES):
                rows = slice(q * hidden, (q + 1) * hidden)
                params[f"gru.{L}.{name}.{gate}"] = tensor(p[rows])
                grads[f"gru.{L}.{name}.{gate}"] = tensor(p.grad[rows])
    return {
        "sizes": {"input": inp, "hidden": hidden, "steps": steps, "batch": batch, "layers": layers},
        "x": tensor(x), "r": tensor(R), "y": tensor(y), "starts": tensor(starts), "h0": tensor(h0),
        "params": params, "grad_params": grads, "grad_x": tensor(x.grad),
    }


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for layers, seed in ((1, 1), (2, 2)):
        path = os.path.join(here, f"gru_{layers}layer.json")
        with open(path, "w") as f:
            json.dump(make(layers, seed), f)
        print("wrote", path)


if __name__ == "__main__":
    main()
