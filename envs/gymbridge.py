# Child side of envs.Make("gym:ID"): runs one Gymnasium (or Gymnasium-like)
# env and answers the Go parent over stdin/stdout. The protocol is described
# in gym.go. Only the standard library is required; numpy is used when present.
import importlib
import json
import math
import os
import struct
import sys
import traceback

try:
    import numpy as np
except ImportError:
    np = None


def flat_values(x):
    if hasattr(x, "tolist"):
        x = x.tolist()
    if isinstance(x, (list, tuple)):
        for y in x:
            yield from flat_values(y)
    else:
        yield x


def prod(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


def bound(x):
    x = float(x)
    if math.isnan(x):
        raise ValueError("envs gym bridge: NaN bound in a Box")
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def describe(s, what):
    """Returns the description of a space: a gymnasium.spaces object (by duck
    typing) or a dict {"type": ..., ...} in the same form."""
    if isinstance(s, dict):
        t = s.get("type")
        get = s.get
    else:
        t = type(s).__name__
        get = lambda k, d=None: getattr(s, k, d)
    if t == "Box":
        pyshape = [int(d) for d in get("shape")]
        n = prod(pyshape)
        low, high = list(flat_values(get("low"))), list(flat_values(get("high")))
        if len(low) == 1 and n != 1:
            low = low * n
        if len(high) == 1 and n != 1:
            high = high * n
        return {"type": "Box", "shape": pyshape or [1], "pyshape": pyshape,
                "dtype": str(get("dtype", "float32")),
                "low": [bound(v) for v in low], "high": [bound(v) for v in high]}
    if t == "Discrete":
        return {"type": "Discrete", "n": int(get("n")), "start": int(get("start", 0) or 0)}
    if t == "MultiDiscrete":
        nvec = get("nvec")
        pyshape = list(getattr(nvec, "shape", [len(nvec)]))
        start = get("start", None)
        if start is not None and any(int(v) != 0 for v in flat_values(start)):
            raise TypeError("envs gym bridge: unsupported %s space %r: MultiDiscrete with a non-zero start" % (what, s))
        return {"type": "MultiDiscrete", "nvec": [int(v) for v in flat_values(nvec)], "pyshape": pyshape}
    if t == "MultiBinary":
        n = get("n")
        pyshape = [int(n)] if isinstance(n, int) else [int(d) for d in n]
        return {"type": "MultiBinary", "n": prod(pyshape), "pyshape": pyshape}
    if t == "Dict":
        spaces = get("spaces")
        items = list(spaces.items()) if hasattr(spaces, "items") else list(spaces)
        return {"type": "Dict", "keys": [str(k) for k, _ in items],
                "spaces": [describe(v, what) for _, v in items]}
    raise TypeError("envs gym bridge: unsupported %s space %r (supported: Box, Discrete, MultiDiscrete, MultiBinary, Dict)" % (what, s))


def size(d):
    if d["type"] == "Dict":
        return sum(size(s) for s in d["spaces"])
    if d["type"] == "Box":
        return prod(d["shape"])
    if d["type"] == "Discrete":
        return 1
    if d["type"] == "MultiDiscrete":
        return len(d["nvec"])
    return d["n"]


def encoder(d):
    """Returns a function from an observation to its flat float32 bytes."""
    if d["type"] == "Dict":
        parts = [(k, encoder(s)) for k, s in zip(d["keys"], d["spaces"])]
        return lambda x: b"".join(e(x[k]) for k, e in parts)
    if np is not None:
        return lambda x: np.asarray(x, dtype="<f4").tobytes()

    def enc(x):
        v = [float(y) for y in flat_values(x)]
        return struct.pack("<%df" % len(v), *v)
    return enc


def reshape(v, shape):
    if len(shape) <= 1:
        return v
    step = len(v) // shape[0]
    return [reshape(v[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def decoder(d):
    """Returns a function from a flat list of floats to an action."""
    t = d["type"]
    if t == "Dict":
        parts, off = [], 0
        for k, s in zip(d["keys"], d["spaces"]):
            n = size(s)
            parts.append((k, off, off + n, decoder(s)))
            off += n
        return lambda a: {k: f(a[i:j]) for k, i, j, f in parts}
    if t == "Discrete":
        return lambda a: int(a[0])
    shape = d["pyshape"]
    if t == "Box":
        if np is not None:
            return lambda a: np.asarray(a, dtype=d["dtype"]).reshape(shape)
        conv = int if "int" in d["dtype"] else float
        if not shape:
            return lambda a: conv(a[0])
        return lambda a: reshape([conv(v) for v in a], shape)
    if np is not None:
        dtype = np.int64 if t == "MultiDiscrete" else np.int8
        return lambda a: np.asarray(a, dtype=dtype).reshape(shape)
    return lambda a: reshape([int(v) for v in a], shape)


def make(cfg):
    for m in cfg.get("import") or []:
        importlib.import_module(m)
    kwargs = cfg.get("kwargs") or {}
    if cfg.get("module_env"):
        mod, _, name = cfg["module_env"].partition(":")
        if not name:
            raise ValueError("envs gym bridge: module_env %r: want \"package.module:ClassName\"" % cfg["module_env"])
        return getattr(importlib.import_module(mod), name)(**kwargs)
    import gymnasium
    env = gymnasium.make(cfg["id"], **kwargs)
    if cfg.get("own_time_limit"):
        # The Go side applies max_episode_steps itself; drop Gymnasium's
        # limit, the outermost wrapper that make adds.
        if isinstance(env, gymnasium.wrappers.TimeLimit):
            env = env.env
    return env


def main():
    inp = sys.stdin.buffer
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints from the env go to stderr, not into the protocol
    sys.stdout = sys.stderr

    def read():
        h = inp.read(4)
        if len(h) < 4:
            return None
        (n,) = struct.unpack("<I", h)
        b = inp.read(n)
        return b if len(b) == n else None

    def write(tag, body):
        out.write(struct.pack("<I", len(body) + 1) + tag + body)
        out.flush()

    cfg = read()
    if cfg is None:
        return
    try:
        env = make(json.loads(cfg))
        obs_desc = describe(env.observation_space, "observation")
        act_desc = describe(env.action_space, "action")
        enc, dec, nobs = encoder(obs_desc), decoder(act_desc), size(obs_desc)
    except BaseException:
        write(b"E", traceback.format_exc().encode())
        return
    write(b"H", json.dumps({"observation_space": obs_desc, "action_space": act_desc}).encode())
    while True:
        msg = read()
        if msg is None or msg[:1] == b"C":
            break
        try:
            if msg[:1] == b"R":
                (seed,) = struct.unpack("<q", msg[1:9])
                obs, info = env.reset(seed=None if seed < 0 else seed)
                reward, flags = 0.0, 0
            elif msg[:1] == b"S":
                a = list(struct.unpack("<%df" % ((len(msg) - 1) // 4), msg[1:]))
                obs, reward, term, trunc, info = env.step(dec(a))
                flags = (1 if term else 0) | (2 if trunc else 0)
            else:
                raise ValueError("envs gym bridge: unknown request %r" % msg[:1])
            ob = enc(obs)
            if len(ob) != 4 * nobs:
                raise ValueError("envs gym bridge: observation has %d values, want %d" % (len(ob) // 4, nobs))
            mask = info.get("action_mask") if isinstance(info, dict) else None
            mb = b""
            if mask is not None:
                flags |= 4
                mb = bytes(1 if v else 0 for v in flat_values(mask))
            write(b"O", struct.pack("<dBI", float(reward), flags, len(mb)) + mb + ob)
        except Exception:
            write(b"E", traceback.format_exc().encode())
    close = getattr(env, "close", None)
    if close is not None:
        close()


main()
