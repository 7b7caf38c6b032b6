"""Read an evolve agent file (format "evolve-agent", version 1 or 2) into PyTorch.

Only the standard library, NumPy and PyTorch are needed. See docs/agent-file.md
for the format. Usage as a library:

    agent = load("elite.safetensors")          # checks the checksum and format
    out, value, state = agent.forward(raw_obs)  # raw_obs: [rows, flat obs size]
    actions = agent.actions(out)                # deterministic actions for the env

`out` is the actor's output (logits for Discrete, MultiDiscrete and
MultiBinary actions, Gaussian means for Box actions), `value` the critic's
value per row and `state` the recurrent state to pass to the next call
(None for non-recurrent agents; zeros at an episode start).

As a command (used by agent/pyreader_test.go):

    /usr/bin/python3 evolve_agent.py AGENT.safetensors OBS.json

where OBS.json is {"steps": [batch, batch, ...]}, each batch a list of rows
of raw observations; the recurrent state is carried from step to step. It
prints {"outputs": [...], "values": [...], "actions": [...]} per step. For
an agent of a masked env, "masks" (optional) gives each step's action masks,
a list of rows of true/false per step as "steps" does (one entry per choice);
without it every action is legal, so "actions" may hold illegal ones.
"""

import hashlib
import json
import math
import struct
import sys

try:
    import numpy as np
    import torch
    from torch import nn
except ImportError as _e:
    raise ImportError(f"evolve_agent needs NumPy and PyTorch ({_e}): apt-get install python3-numpy python3-torch "
                      "and run it with /usr/bin/python3, or pip install numpy torch") from _e

FORMAT, VERSIONS = "evolve-agent", ("1", "2")  # 2 adds the description's "env"
OBS_CLIP = 10.0  # normalised observations are clipped to ±10
NORM_EPS = 1e-8  # (x - mean) / sqrt(var + 1e-8)
MASK_FILL = -1e9  # the logit of an illegal action
VALUE_CLIP = 5.0  # normalize_value: standardised values are clipped to ±5


def _float(v):
    """A JSON float of the format: a number or "nan", "inf", "-inf"."""
    if isinstance(v, str):
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[v]
    return float(v)


def read_safetensors(path, verify=True):
    """Returns ({name: float32 array}, metadata dict); checks the checksum."""
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise ValueError(f"{path}: {len(raw)} bytes, too short for a safetensors header")
    (hlen,) = struct.unpack("<Q", raw[:8])
    if hlen > len(raw) - 8:
        raise ValueError(f"{path}: truncated, or not an agent file: the header needs {8 + hlen} bytes, the file has {len(raw)}")
    try:
        header = json.loads(raw[8 : 8 + hlen].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: the header is not JSON ({e}): not an agent file") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path}: the header is a JSON {type(header).__name__}, not an object: not a safetensors file")
    data = raw[8 + hlen :]
    meta = header.pop("__metadata__", {})
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        got = meta.get("format") if isinstance(meta, dict) else None
        raise ValueError(f"{path}: not an evolve agent file: its metadata's format is {got!r}, want {FORMAT!r}")
    for name, e in header.items():
        ok = isinstance(e, dict) and isinstance(e.get("dtype"), str) and isinstance(e.get("shape"), list)
        offs = e.get("data_offsets") if ok else None
        if not (ok and isinstance(offs, list) and len(offs) == 2 and all(isinstance(x, int) and x >= 0 for x in offs)
                and offs[0] <= offs[1] and all(isinstance(x, int) and x >= 0 for x in e["shape"])):
            raise ValueError(f"{path}: tensor {name!r}: want dtype, shape and two data_offsets, got {e!r:.200}")
    need = max((e["data_offsets"][1] for k, e in header.items()), default=0)
    if need > len(data):
        raise ValueError(f"{path}: truncated: the header describes {need} bytes of tensors, the file has {len(data)}")
    if verify:
        want = meta.get("checksum")
        got = "sha256:" + hashlib.sha256(data).hexdigest()
        if want != got:
            raise ValueError(f"{path}: checksum {want!r}, the data hashes to {got!r}")
    tensors = {}
    for name, e in header.items():
        if e["dtype"] != "F32":
            raise ValueError(f"{path}: tensor {name}: dtype {e['dtype']}, want F32")
        b, end = e["data_offsets"]
        if end - b != 4 * math.prod(e["shape"]):
            raise ValueError(f"{path}: tensor {name}: {end - b} bytes for shape {e['shape']}")
        tensors[name] = np.frombuffer(data[b:end], dtype="<f4").reshape(e["shape"]).astype(np.float32)
    return tensors, meta


def activation(name):
    return {
        "ReLU": nn.ReLU(),
        "Tanh": nn.Tanh(),
        "ELU": nn.ELU(alpha=1.0),
        "GELU": nn.GELU(approximate="tanh"),
        "LeakyReLU": nn.LeakyReLU(negative_slope=0.01),
        "Softsign": nn.Softsign(),
        "Sigmoid": nn.Sigmoid(),
    }[name]


def _t(a):
    return nn.Parameter(torch.from_numpy(np.ascontiguousarray(a)), requires_grad=False)


def linear(t, prefix):
    """A torch Linear from <prefix>.weight [in, out] (any leading shape) and <prefix>.bias."""
    w = t[prefix + ".weight"]
    w = w.reshape(-1, w.shape[-1])  # a CNN's latent weight [C, H, W, L] is [C·H·W, L]
    lin = nn.Linear(w.shape[0], w.shape[1])
    lin.weight = _t(w.T)
    lin.bias = _t(t[prefix + ".bias"])
    return lin


def mlp(t, prefix, m):
    """Linear → [LayerNorm] → activation per hidden layer (prefix.N.*)."""
    layers = []
    for i, h in enumerate(m.get("hidden") or []):
        p = f"{prefix}.{i}"
        layers.append(linear(t, p))
        if m.get("layer_norm"):
            ln = nn.LayerNorm(h, eps=1e-5)
            ln.weight, ln.bias = _t(t[p + ".norm.weight"]), _t(t[p + ".norm.bias"])
            layers.append(ln)
        layers.append(activation(m["activation"]))
    return nn.Sequential(*layers)


class CNN(nn.Module):
    """Unpadded Conv2d + activation per layer on NCHW images, flattened (C, H, W)."""

    def __init__(self, t, prefix, input_shape, c):
        super().__init__()
        self.shape = list(input_shape)
        layers = []
        ch = input_shape[0]
        for i, (out, k, s) in enumerate(zip(c["channels"], c["kernels"], c["strides"])):
            conv = nn.Conv2d(ch, out, k, stride=s, padding=0)
            conv.weight = _t(t[f"{prefix}.{i}.weight"])  # [out, in, k, k], as PyTorch
            conv.bias = _t(t[f"{prefix}.{i}.bias"])
            layers += [conv, activation(c["activation"])]
            ch = out
        self.body = nn.Sequential(*layers)

    def forward(self, x):
        x = self.body(x.reshape([x.shape[0]] + self.shape))
        return x.reshape(x.shape[0], -1)


class Encoder(nn.Module):
    """Encoder (MLP, CNN, LSTM, GRU or one MLP/CNN per Dict key) and latent layer(s)."""

    def __init__(self, t, spec):
        super().__init__()
        self.kind = spec["encoder"]
        self.lstm = None
        act = spec["head"]["activation"]  # the latent layer uses the head's activation
        inputs = spec.get("inputs") or []
        if inputs:  # Dict: per key encoder.<key>.<kind>.N and latent.<key>, in key order
            self.keys = nn.ModuleList()
            self.sizes = []
            for k in inputs:
                key, kind = k["key"], k["encoder"]
                prefix = f"encoder.{key}.{kind}"
                body = mlp(t, prefix, k["mlp"]) if kind == "mlp" else CNN(t, prefix, k["input"], k["cnn"])
                self.keys.append(nn.Sequential(body, linear(t, "latent." + key), activation(act)))
                self.sizes.append(int(np.prod(k["input"])))
            self.kind = "dict"
            return
        if self.kind == "mlp":
            self.body = mlp(t, "encoder.mlp", spec["mlp"])
        elif self.kind == "cnn":
            self.body = CNN(t, "encoder.cnn", spec["input"], spec["cnn"])
        elif self.kind in ("lstm", "gru"):
            # Per-gate tensors [in, H] stacked into PyTorch's [G·H, in], in its gate order.
            m = spec[self.kind]
            h, n = m["hidden"], m["layers"]
            self.hidden, self.layers = h, n
            gates = "ifgo" if self.kind == "lstm" else "rzn"
            module = nn.LSTM if self.kind == "lstm" else nn.GRU
            self.lstm = module(spec["input"][0], h, num_layers=n)
            for l in range(n):
                p = f"encoder.{self.kind}.{l}"
                cat = lambda kind: np.concatenate([t[f"{p}.{kind}.{q}"] for q in gates], axis=-1)
                setattr(self.lstm, f"weight_ih_l{l}", _t(cat("w_ih").T))  # [G·H, in]
                setattr(self.lstm, f"weight_hh_l{l}", _t(cat("w_hh").T))  # [G·H, H]
                setattr(self.lstm, f"bias_ih_l{l}", _t(cat("b_ih")))
                setattr(self.lstm, f"bias_hh_l{l}", _t(cat("b_hh")))
            self.body = nn.Identity()
        elif self.kind == "transformer":
            # Kept in the file's [in, out] layout: y = x @ W + b.
            self.tf, self.input_size = spec["transformer"], spec["input"][0]
            prefix = "encoder.transformer."
            self.tp = {k[len(prefix):]: _t(v) for k, v in t.items() if k.startswith(prefix)}
            tf, pos = self.tf, self.tp.get("pos")
            if not (tf["layers"] >= 1 and tf["heads"] >= 1 and tf["width"] % tf["heads"] == 0 and tf["context"] >= 1) \
                    or pos is None or list(pos.shape) != [tf["context"], tf["width"]] \
                    or any(k.startswith(f"{tf['layers']}.") for k in self.tp) or f"{tf['layers'] - 1}.mlp.1.weight" not in self.tp:
                sizes = ", ".join(f"{k} {tf.get(k)}" for k in ("layers", "heads", "width", "mlp", "context"))
                raise ValueError(f"the header's transformer ({sizes}) does not match its tensors "
                                 f"(positions {None if pos is None else list(pos.shape)})")
            self.body = nn.Identity()
        else:
            raise ValueError(f"unknown encoder {self.kind!r}")
        self.latent = nn.Sequential(linear(t, "latent"), activation(act))

    def state_size(self):
        """Floats of recurrent state per row: h and c of every LSTM layer, h of every GRU
        layer, a Transformer's window of the context − 1 inputs before the step and how
        many of them belong to the episode, 0 without memory."""
        if self.kind == "transformer":
            return (self.tf["context"] - 1) * self.input_size + 1
        if self.lstm is None:
            return 0
        return (2 if self.kind == "lstm" else 1) * self.layers * self.hidden

    def forward(self, x, state=None):
        """x [rows, flat input]; for an LSTM or GRU x may be [steps, rows, input]
        (time-major). state: [rows, state_size] (layer by layer h then c; a GRU's h only)
        or None for zeros. Returns the latent and the new state."""
        if self.kind == "dict":
            lats, off = [], 0
            for enc, n in zip(self.keys, self.sizes):
                lats.append(enc(x[..., off : off + n]))
                off += n
            return torch.cat(lats, dim=-1), None
        if self.kind == "transformer":
            return self._transformer(x, state)
        if self.lstm is None:
            return self.latent(self.body(x)), None
        seq = x if x.dim() == 3 else x.unsqueeze(0)
        rows, h, n = seq.shape[1], self.hidden, self.layers
        k = 2 if self.kind == "lstm" else 1
        if state is None:
            state = torch.zeros(rows, k * n * h, dtype=seq.dtype)
        s = state.reshape(rows, n, k, h)
        per = [s[:, :, j, :].permute(1, 0, 2).contiguous() for j in range(k)]  # [n, rows, h]
        if k == 2:
            y, (hT, cT) = self.lstm(seq, (per[0], per[1]))
            final = [hT, cT]
        else:
            y, hT = self.lstm(seq, per[0])
            final = [hT]
        new = torch.stack(final, dim=2).permute(1, 0, 2, 3).reshape(rows, k * n * h)
        lat = self.latent(y)
        return (lat if x.dim() == 3 else lat[0]), new


    def _transformer(self, x, state):
        """One step of the Transformer encoder for rows x [rows, input] (or steps of them,
        [steps, rows, input], carried one at a time) from state (the window before it)."""
        if x.dim() == 3:
            lats = []
            for step in x:
                lat, state = self._transformer(step, state)
                lats.append(lat)
            return torch.stack(lats), state
        K, n_in, p = self.tf["context"], self.input_size, self.tp
        D, H = self.tf["width"], self.tf["heads"]
        rows = x.shape[0]
        if state is None:
            state = torch.zeros(rows, self.state_size(), dtype=x.dtype)
        n = state[:, -1].long().clamp(0, K - 1)
        first = (K - 1) - n  # each window's first valid position
        window = torch.cat([state[:, :-1].reshape(rows, K - 1, n_in), x.unsqueeze(1)], dim=1)
        j = torch.arange(K)
        window = window * (j[None, :] >= first[:, None]).unsqueeze(2).to(x.dtype)
        h = window @ p["embed.weight"] + p["embed.bias"] + p["pos"]
        # Query i may attend key j when first <= j <= i; a query before first, to itself only
        # (its row is never read), which keeps the softmax defined.
        i = j[:, None]
        allowed = (j[None, None, :] <= i[None]) & (j[None, None, :] >= first[:, None, None])
        allowed = allowed | ((i[None] < first[:, None, None]) & (j[None, None, :] == i[None]))
        mask = torch.zeros(rows, 1, K, K, dtype=x.dtype).masked_fill(~allowed.unsqueeze(1), float("-inf"))
        dh = D // H
        norm = lambda v, name: nn.functional.layer_norm(v, (D,), p[name + ".weight"], p[name + ".bias"], 1e-5)
        for layer in range(self.tf["layers"]):
            q = lambda v, name: v @ p[f"{layer}.{name}.weight"] + p[f"{layer}.{name}.bias"]
            a = norm(h, f"{layer}.attn.norm")
            heads = lambda v: v.reshape(rows, K, H, dh).transpose(1, 2)
            s = heads(q(a, "attn.q")) @ heads(q(a, "attn.k")).transpose(2, 3) / math.sqrt(dh) + mask
            o = (torch.softmax(s, dim=-1) @ heads(q(a, "attn.v"))).transpose(1, 2).reshape(rows, K, D)
            h = h + q(o, "attn.out")
            h = h + q(torch.relu(q(norm(h, f"{layer}.mlp.norm"), "mlp.0")), "mlp.1")
        lat = self.latent(norm(h[:, K - 1], "norm"))
        new = torch.cat([window[:, 1:].reshape(rows, -1), torch.clamp(n + 1, max=K - 1).unsqueeze(1).to(x.dtype)], dim=1)
        return lat, new


class Head(nn.Module):
    """head MLP (head.N.*) and output layer (out.*, no activation)."""

    def __init__(self, t, spec):
        super().__init__()
        self.body = nn.Sequential(mlp(t, "head", spec["head"]), linear(t, "out"))

    def forward(self, latent):
        return self.body(latent)


class Agent(nn.Module):
    def __init__(self, tensors, meta):
        super().__init__()
        if meta.get("format") != FORMAT or meta.get("version") not in VERSIONS:
            raise ValueError(f"format {meta.get('format')!r} version {meta.get('version')!r}, want {FORMAT!r} {' or '.join(VERSIONS)}")
        self.meta = json.loads(meta["agent"])
        self.tensors = tensors
        d = self.meta
        self.shared = bool(d["config"].get("share_encoders"))
        part = lambda prefix: {k[len(prefix) :]: v for k, v in tensors.items() if k.startswith(prefix)}
        ta, tc = part("actor."), part("critic.")
        self.actor_encoder = Encoder(ta, d["actor"])
        self.actor_head = Head(ta, d["actor"])
        self.critic_encoder = None if self.shared else Encoder(tc, d["critic"])
        self.critic_head = Head(tc, d["critic"])
        self.log_std = tensors.get("actor.log_std")
        self.obs_space, self.act_space = d["observation_space"], d["action_space"]
        self.norm = None
        if d.get("norm") is not None:
            n = d["norm"]  # float64 statistics, exact in the JSON
            self.norm = (np.array([_float(v) for v in n["mean"]]), np.array([_float(v) for v in n["var"]]))
        self.scale = self._image_scale()
        # normalize_value: the critic predicts standardised values; forward
        # returns them in return units, std·clip(v, ±5) + mean in float32.
        self.value_norm = None
        if d.get("value_norm") is not None:
            v = d["value_norm"]
            self.value_norm = (np.float32(np.sqrt(np.float32(_float(v["var"][0])))), np.float32(_float(v["mean"][0])))
        self.eval()

    def _image_scale(self):
        """(offset, low, high) of every bounded image: a CNN's Box or a Dict's 3-D keys."""
        def box(s):
            return np.array([_float(v) for v in s["low"]], np.float32), np.array([_float(v) for v in s["high"]], np.float32)

        def bounded(lo, hi):
            return np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))

        s = self.obs_space
        out = []
        if s["type"] == "box" and self.meta["actor"]["encoder"] == "cnn" and not self.meta["actor"].get("inputs"):
            lo, hi = box(s)
            if bounded(lo, hi):
                out.append((0, lo, hi))
        elif s["type"] == "dict":
            off = 0
            for sub in s["spaces"]:
                n = int(np.prod(sub["shape"]))
                if len(sub["shape"]) == 3:
                    lo, hi = box(sub)
                    if bounded(lo, hi):
                        out.append((off, lo, hi))
                off += n
        return out

    def state_size(self):
        n = self.actor_encoder.state_size()
        return n if self.shared else n + self.critic_encoder.state_size()

    def initial_state(self, rows):
        """The zero state of an episode start, or None for non-recurrent agents."""
        n = self.state_size()
        return np.zeros((rows, n), np.float32) if n else None

    def preprocess(self, raw):
        """One-hot encode discrete observations, normalise (normalize_obs) or scale bounded
        images to [0, 1]: float32 [rows, network input]."""
        raw = self._rows(raw)
        s = self.obs_space
        if s["type"] in ("discrete", "multi_discrete"):
            nvec = [s["n"]] if s["type"] == "discrete" else s["nvec"]
            start = [s.get("start", 0)] if s["type"] == "discrete" else [0] * len(nvec)
            parts = []
            for j, (n, lo) in enumerate(zip(nvec, start)):
                idx = raw[:, j].astype(np.int64) - lo
                parts.append((idx[:, None] == np.arange(n)[None, :]).astype(np.float32))
            return np.concatenate(parts, axis=1)
        if self.norm is not None:
            mean, var = self.norm
            z = (raw.astype(np.float64) - mean) / np.sqrt(var + NORM_EPS)
            return np.clip(z, -OBS_CLIP, OBS_CLIP).astype(np.float32)
        x = raw.copy()
        for off, lo, hi in self.scale:
            n = len(lo)
            v = raw[:, off : off + n]
            span = hi - lo
            with np.errstate(divide="ignore", invalid="ignore"):
                y = np.where(span > 0, (v - lo) / np.where(span > 0, span, np.float32(1)), np.float32(0))
            x[:, off : off + n] = y.astype(np.float32)
        return x

    def _rows(self, raw):
        """raw as float32 [rows, flat observation size]: rows of the space's
        shape or flat, or one observation; anything else is refused (a
        CartPole observation fed to a CartPoleNoVel agent would otherwise
        become two rows)."""
        shape = tuple(int(x) for x in self._flat_shape())
        flat = math.prod(shape)
        a = np.asarray(raw, np.float32)
        if (a.shape == shape or a.shape[1:] == shape or (a.ndim == 2 and a.shape[1] == flat)
                or (a.ndim == 1 and (a.size == flat or flat == 1))):
            a = a.reshape(-1, flat)
            bad = np.argwhere(~np.isfinite(a))
            if len(bad):
                r, j = bad[0]
                # As Go's Act: a NaN or Inf would flow through to a NaN action or value.
                raise ValueError(f"observation value {j} of row {r} is {a[r, j]}: want finite numbers")
            return a
        raise ValueError(f"observations of shape {list(a.shape)}: want [rows, {flat}], [rows] + {list(shape)} or one "
                         f"observation of {list(shape)} (the agent's {self.obs_space['type']} observation space)")

    def _flat_shape(self):
        s = self.obs_space
        if s["type"] == "dict":
            return [sum(int(np.prod(sub["shape"])) for sub in s["spaces"])]
        if s["type"] == "discrete":
            return [1]
        if s["type"] == "multi_discrete":
            return [len(s["nvec"])]
        return s["shape"]

    def finite(self):
        """Whether every parameter is finite (a diverged agent's are not)."""
        return all(bool(torch.isfinite(p).all()) for p in self.parameters())

    @torch.no_grad()
    def forward(self, raw_obs, state=None):
        """Raw observations [rows, flat size] → (actor output [rows, out], value [rows], state).
        state ([rows, state_size], actor's recurrent state then the critic's) is carried by the
        caller; None means zeros, as at an episode start."""
        x = torch.from_numpy(self.preprocess(raw_obs))
        st = None if state is None else torch.as_tensor(np.asarray(state, np.float32))
        na = self.actor_encoder.state_size()
        lat, sa = self.actor_encoder(x, None if st is None else st[:, :na])
        out = self.actor_head(lat)
        sc = None
        if not self.shared:
            lat, sc = self.critic_encoder(x, None if st is None else st[:, na:])
        value = self.critic_head(lat)[:, 0]
        if self.value_norm is not None:
            std, mean = self.value_norm
            value = std * torch.clamp(value, -VALUE_CLIP, VALUE_CLIP) + mean
        new = None
        if na:
            new = sa if self.shared else torch.cat([sa, sc], dim=1)
            new = new.numpy()
        return out.numpy(), value.numpy(), new

    def actions(self, out, masks=None):
        """Deterministic env actions from the actor's output [rows, out] (masks: [rows, out] bools)."""
        out = np.asarray(out, np.float32)
        s = self.act_space
        if s["type"] in ("discrete", "multi_discrete"):
            nvec = [s["n"]] if s["type"] == "discrete" else s["nvec"]
            logits = out.copy()
            if masks is not None:
                m = np.asarray(masks, bool)
                if m.shape != logits.shape:
                    raise ValueError(f"action masks of shape {list(m.shape)}: want {list(logits.shape)}, "
                                     f"one entry per choice of each row")
                off = 0
                for c, n in enumerate(nvec):
                    dead = np.flatnonzero(~m[:, off : off + n].any(axis=1))
                    if len(dead):
                        raise ValueError(f"row {dead[0]}: action mask leaves component {c} no legal choice")
                    off += n
                logits = np.where(m, logits, logits + np.float32(MASK_FILL))
            acts, off = [], 0
            for n in nvec:
                acts.append(np.argmax(logits[:, off : off + n], axis=1))  # first maximum on ties
                off += n
            a = np.stack(acts, axis=1).astype(np.float32)
            return a + s.get("start", 0) if s["type"] == "discrete" else a
        if masks is not None:
            raise ValueError(f"action masks given for a {s['type']} action space, which takes none")
        if s["type"] == "multi_binary":
            return (out >= 0).astype(np.float32)  # σ(z) ≥ 0.5
        lo = np.array([_float(v) for v in s["low"]], np.float32)
        hi = np.array([_float(v) for v in s["high"]], np.float32)
        return np.clip(out, lo, hi)  # the Gaussian's mean, clipped to the Box


def load(path, verify=True):
    tensors, meta = read_safetensors(path, verify)
    try:
        return Agent(tensors, meta)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None
    except (KeyError, TypeError, ZeroDivisionError, RuntimeError) as e:
        # The header is outside the checksum: one edited by hand can describe a
        # network its tensors do not hold.
        raise ValueError(f"{path}: the header does not describe the file's tensors ({type(e).__name__}: {e})") from None


USAGE = ("usage: evolve_agent.py AGENT.safetensors OBS.json  "
         "(OBS.json: {\"steps\": [[row, ...], ...]}, optionally \"masks\": [[mask row, ...], ...])")


def _mask_rows(batch):
    """A step's mask rows from JSON: true/false (or 1/0) entries, nothing else."""
    m = np.asarray(batch)
    if m.dtype == bool or (m.dtype.kind in "iu" and np.isin(m, (0, 1)).all()):
        return m.astype(bool)
    raise ValueError("action masks: want rows of true/false entries")


def main(argv):
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 0 if len(argv) == 2 and argv[1] in ("-h", "--help") else 2
    try:
        agent = load(argv[1])
        with open(argv[2]) as f:
            req = json.load(f)
        if not isinstance(req, dict) or not isinstance(req.get("steps"), list):
            raise ValueError(f"{argv[2]}: want a JSON object with a list \"steps\"")
        masks = req.get("masks")
        if masks is not None and (not isinstance(masks, list) or len(masks) != len(req["steps"])):
            raise ValueError(f"{argv[2]}: \"masks\" must be a list of one batch of mask rows per step "
                             f"({len(req['steps'])} steps)")
    except IsADirectoryError as e:
        print(f"evolve_agent: {e.filename}: a directory; give an agent file (a run's elite.safetensors)", file=sys.stderr)
        return 2
    except (OSError, ValueError) as e:
        print(f"evolve_agent: {e}", file=sys.stderr)
        return 2
    state = None
    res = {"outputs": [], "values": [], "actions": [], "state_size": agent.state_size()}
    for i, batch in enumerate(req["steps"]):
        try:
            out, value, state = agent.forward(np.asarray(batch, np.float32), state)
            if not (np.isfinite(out).all() and np.isfinite(value).all()):
                # As Go's Act: non-finite weights (a diverged agent) act as action 0 or NaN.
                raise ValueError("the network's outputs are not finite: "
                                 + ("its weights are not (a diverged agent)" if not agent.finite()
                                    else "its weights are, a number overflowed"))
            acts = agent.actions(out, None if masks is None else _mask_rows(masks[i]))
        except ValueError as e:
            print(f"evolve_agent: {argv[2]}: step {i}: {e}", file=sys.stderr)
            return 2
        res["outputs"].append(out.astype(np.float64).tolist())
        res["values"].append(value.astype(np.float64).tolist())
        res["actions"].append(acts.astype(np.float64).tolist())
    json.dump(res, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
