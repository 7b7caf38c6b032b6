# Child side of envs.Make("gym:ID"): runs one Gymnasium (or Gymnasium-like)
# env and answers the Go parent over stdin/stdout. The protocol is described
# in gym.go. Only the standard library is required; numpy is used when present.
import importlib
import json
import math
import os
import select
import struct
import sys
import time
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


FLOAT32_MAX = 3.4028234663852886e38


def bound(x):
    """A Box bound as the Go side reads it: a float32, or "inf" / "-inf"
    (JSON has none) for bounds beyond float32's range."""
    x = float(x)
    if math.isnan(x):
        raise ValueError("envs gym bridge: NaN bound in a Box")
    if abs(x) > FLOAT32_MAX:
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


def wire(d):
    """Returns a description in the JSON form of envs.MarshalSpace, without
    what only this side needs (Python shapes, dtypes)."""
    t = d["type"]
    if t == "Box":
        return {"type": "box", "shape": d["shape"], "low": d["low"], "high": d["high"]}
    if t == "Discrete":
        w = {"type": "discrete", "n": d["n"]}
        if d["start"]:
            w["start"] = d["start"]
        return w
    if t == "MultiDiscrete":
        return {"type": "multi_discrete", "nvec": d["nvec"]}
    if t == "MultiBinary":
        return {"type": "multi_binary", "n": d["n"]}
    return {"type": "dict", "keys": d["keys"], "spaces": [wire(s) for s in d["spaces"]]}


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
        # An integer Box takes the nearest integer (ties to even), not the
        # one toward zero, which gave 0 all of (-1, 1).
        integer = "int" in d["dtype"]
        if np is not None:
            if integer:
                return lambda a: np.rint(np.asarray(a, dtype=np.float64)).astype(d["dtype"]).reshape(shape)
            return lambda a: np.asarray(a, dtype=d["dtype"]).reshape(shape)
        conv = round if integer else float
        if not shape:
            return lambda a: conv(a[0])
        return lambda a: reshape([conv(v) for v in a], shape)
    if np is not None:
        dtype = np.int64 if t == "MultiDiscrete" else np.int8
        return lambda a: np.asarray(a, dtype=dtype).reshape(shape)
    return lambda a: reshape([int(v) for v in a], shape)


def resolve(name):
    """Returns the object a "package.module.Name" or "package.module:Name"
    names."""
    mod, sep, attr = name.partition(":")
    if not sep:
        mod, _, attr = name.rpartition(".")
    if not mod or not attr:
        raise ValueError("envs gym bridge: wrapper %r: want \"package.module.Class\"" % name)
    obj = importlib.import_module(mod)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def run_import(i, entry):
    """Imports the module of entry i of the option "import"; for an entry
    "package.module:function", then calls function() (for packages that
    register their envs in a function, such as MinAtar's
    "minatar.gym:register_envs")."""
    mod, sep, fn = entry.partition(":")
    try:
        module = importlib.import_module(mod)
        if not sep:
            return
        obj = module
        for part in fn.split("."):
            obj = getattr(obj, part)
        if not callable(obj):
            raise TypeError("%s.%s is a %s, not a function" % (mod, fn, type(obj).__name__))
        obj()
    except Exception as e:
        raise ValueError("envs gym bridge: option import[%d] = %r: %s: %s" % (i, entry, type(e).__name__, e)) from e


def make(cfg):
    kwargs = cfg.get("kwargs") or {}
    if cfg.get("module_env"):
        mod, _, name = cfg["module_env"].partition(":")
        if not name:
            raise ValueError("envs gym bridge: module_env %r: want \"package.module:ClassName\"" % cfg["module_env"])
        try:
            cls = getattr(importlib.import_module(mod), name)
        except Exception as e:
            raise ValueError("envs gym bridge: option module_env = %r: %s: %s" % (cfg["module_env"], type(e).__name__, e)) from e
        env = cls(**kwargs)
    else:
        import gymnasium
        env = gymnasium.make(cfg["id"], **kwargs)
        if cfg.get("max_episode_steps") is not None:
            # The bridge counts steps itself: drop Gymnasium's limit.
            env = without_time_limit(env, gymnasium.wrappers.TimeLimit)
    for i, w in enumerate(cfg.get("wrappers") or []):
        try:
            env = resolve(w["name"])(env, **(w.get("kwargs") or {}))
        except Exception as e:
            raise ValueError("envs gym bridge: option wrappers[%d] (%s): %s: %s" % (i, w["name"], type(e).__name__, e)) from e
    return env


def without_time_limit(env, time_limit):
    """Returns env with the first wrapper of type time_limit in its chain
    taken out. make puts its TimeLimit under the render wrappers it adds
    for some render modes (RenderCollection for "rgb_array_list"), so it
    is looked for all the way down."""
    if isinstance(env, time_limit):
        return env.env
    outer = env
    while hasattr(outer, "env"):
        if isinstance(outer.env, time_limit):
            outer.env = outer.env.env
            break
        outer = outer.env
    return env


def channels_first(d, enc):
    """For the option channels_first: the description of an [H, W, C] Box
    as the [C, H, W] Box evolve's CNN reads, and an encoder that moves the
    channels of enc's [H, W, C] values first."""
    if d["type"] != "Box" or len(d["pyshape"]) != 3:
        raise ValueError("envs gym bridge: option channels_first = true: the observation space is a %s of shape %s, want a Box of shape [H, W, C]"
                         % (d["type"], d.get("pyshape")))
    h, w, c = d["pyshape"]
    if h < w and h < c:
        # Images have more rows than channels: this one is [C, H, W] already,
        # and moving its last axis first would mix rows into channels.
        raise ValueError("envs gym bridge: option channels_first = true: the observation space's shape %s is channels-first "
                         "already (its first dimension is the smallest, %d channels of %d×%d): leave the option out"
                         % (list(d["pyshape"]), h, w, c))
    # perm[k] is the [H, W, C] index of the k-th value in [C, H, W] order.
    perm = [(y * w + x) * c + ch for ch in range(c) for y in range(h) for x in range(w)]
    moved = dict(d, shape=[c, h, w], pyshape=[c, h, w],
                 low=[d["low"][i] for i in perm], high=[d["high"][i] for i in perm])
    n = h * w * c

    def enc_first(x):
        b = enc(x)
        if len(b) != 4 * n:
            return b  # the size check names it
        if np is not None:
            return np.frombuffer(b, dtype="<f4").reshape(h, w, c).transpose(2, 0, 1).tobytes()
        v = struct.unpack("<%df" % n, b)
        return struct.pack("<%df" % n, *(v[i] for i in perm))
    return moved, enc_first


OLD_API = ("an env of the old Gym API (gym < 0.26) returns %s: update it to Gymnasium's API, or wrap it in "
           "Shimmy's GymV21CompatibilityV0 (Gymnasium before 1.0: gymnasium.wrappers.EnvCompatibility)")


def reset_result(res):
    """reset()'s (observation, info); an error that says so for anything
    else, such as the observation alone."""
    if isinstance(res, tuple) and len(res) == 2:
        return res
    raise ValueError("envs gym bridge: reset() returned %s, want (observation, info); " % kind(res)
                     + OLD_API % "the observation alone")


def step_result(res):
    """step()'s five values; an error that says so for anything else, such
    as the old API's four."""
    if isinstance(res, tuple) and len(res) == 5:
        return res
    raise ValueError("envs gym bridge: step() returned %s, want (observation, reward, terminated, truncated, info); "
                     % kind(res) + OLD_API % "four: (observation, reward, done, info)")


def kind(res):
    if isinstance(res, tuple):
        return "%d values" % len(res)
    return "a %s" % type(res).__name__


def is_frame(x):
    """Whether x is one picture, height × width × channels, as an array or
    as nested lists."""
    if getattr(x, "ndim", None) is not None:
        return x.ndim == 3
    for _ in range(2):
        if not isinstance(x, (list, tuple)) or not x:
            return False
        x = x[0]
    return isinstance(x, (list, tuple))


def mask_size(d):
    """The length of an action mask for the action space d (0: no mask)."""
    if d["type"] == "Discrete":
        return d["n"]
    if d["type"] == "MultiDiscrete":
        return sum(d["nvec"])
    return 0


def main():
    inp = sys.stdin.buffer
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints from the env go to stderr, not into the protocol
    sys.stdout = sys.stderr

    fd = inp.fileno()
    os.set_blocking(fd, False)
    pending = bytearray()
    spin = getattr(os, "sched_yield", lambda: None)

    def fill(n):
        """Reads until pending holds n bytes; False at the end of stdin.
        Polls for a while (yielding the CPU) before it sleeps in select:
        two processes that both sleep between messages pay two wake-ups
        per exchange, tens of µs each on an idle virtual machine."""
        deadline = None
        while len(pending) < n:
            try:
                b = os.read(fd, max(n - len(pending), 65536))
            except BlockingIOError:
                now = time.perf_counter()
                if deadline is None:
                    deadline = now + 0.0002
                if now < deadline:
                    spin()
                else:
                    select.select([fd], [], [])
                continue
            if not b:
                return False
            pending.extend(b)
        return True

    def read():
        if not fill(4):
            return None
        (n,) = struct.unpack_from("<I", pending)
        if not fill(4 + n):
            return None
        b = bytes(pending[4:4 + n])
        del pending[:4 + n]
        return b

    def write(tag, *parts):
        body = b"".join(parts)
        out.write(struct.pack("<I", len(body) + 1) + tag + body)
        out.flush()

    def error(index):
        # python -c names this file "<string>" in tracebacks.
        tb = traceback.format_exc().replace('File "<string>"', 'File "envs/gymbridge.py"')
        write(b"E", struct.pack("<I", index), tb.encode())

    cfg = read()
    if cfg is None:
        return
    envs = []
    try:
        cfg = json.loads(cfg)
        for i, m in enumerate(cfg.get("import") or []):
            run_import(i, m)
        descs = None
        for i in range(int(cfg.get("num_envs", 1))):
            env = make(cfg)
            envs.append(env)
            d = {"observation_space": describe(env.observation_space, "observation"),
                 "action_space": describe(env.action_space, "action")}
            if descs is None:
                descs = d
            elif d != descs:
                raise ValueError("envs gym bridge: env %d has spaces %r, env 0 %r" % (i, d, descs))
        obs_desc, act_desc = descs["observation_space"], descs["action_space"]
        enc, dec = encoder(obs_desc), decoder(act_desc)
        if cfg.get("channels_first"):
            obs_desc, enc = channels_first(obs_desc, enc)
            descs["observation_space"] = obs_desc
        nobs, nact, nmask = size(obs_desc), size(act_desc), mask_size(act_desc)
    except BaseException:
        error(0)
        return
    write(b"H", json.dumps({k: wire(v) for k, v in descs.items()}).encode())

    n = len(envs)
    limit = cfg.get("max_episode_steps")
    elapsed = [0] * n
    discrete = act_desc["type"] == "Discrete"

    def mask_of(info):
        mask = info.get("action_mask") if isinstance(info, dict) else None
        if mask is None:
            return None
        mb = bytes(1 if v else 0 for v in flat_values(mask))
        if len(mb) != nmask:
            raise ValueError("envs gym bridge: action mask of %d entries, want %d" % (len(mb), nmask))
        return mb

    def observation(obs):
        ob = enc(obs)
        if len(ob) != 4 * nobs:
            raise ValueError("envs gym bridge: observation has %d values, want %d" % (len(ob) // 4, nobs))
        return ob

    def answer(rewards, flags, obs, masks, nexts, next_masks):
        write(b"O", struct.pack("<%dd" % len(rewards), *rewards), bytes(flags),
              b"".join(obs), b"".join(masks), b"".join(nexts), b"".join(next_masks))

    def reset(indices, seeds):
        k = len(indices)
        flags, obs, masks = bytearray(k), [], []
        for j, (i, seed) in enumerate(zip(indices, seeds)):
            current[0] = i
            elapsed[i] = 0
            o, info = reset_result(envs[i].reset(seed=None if seed < 0 else seed))
            obs.append(observation(o))
            m = mask_of(info)
            if m is not None:
                flags[j] |= 4
                masks.append(m)
        answer([0.0] * k, flags, obs, masks, [], [])

    def step(indices, actions, auto_reset):
        k = len(indices)
        rewards, flags, obs, masks, nexts, next_masks = [0.0] * k, bytearray(k), [], [], [], []
        for j, i in enumerate(indices):
            current[0] = i
            a = actions[j * nact:(j + 1) * nact]
            o, r, term, trunc, info = step_result(envs[i].step(int(a[0]) if discrete else dec(a)))
            elapsed[i] += 1
            if limit and elapsed[i] >= limit:
                trunc = True
            rewards[j] = float(r)
            f = (1 if term else 0) | (2 if trunc else 0)
            obs.append(observation(o))
            m = mask_of(info)
            if m is not None:
                f |= 4
                masks.append(m)
            if auto_reset and (term or trunc):
                f |= 8
                elapsed[i] = 0
                o, info = reset_result(envs[i].reset())
                nexts.append(observation(o))
                m = mask_of(info)
                if m is not None:
                    f |= 16
                    next_masks.append(m)
            flags[j] = f
        answer(rewards, flags, obs, masks, nexts, next_masks)

    def frame(img):
        """Returns an 'I' answer's body for a render() result: an array of
        height × width × 3 (or 4) uint8, or None; or, with render_mode
        "rgb_array_list", a list of them (the frames since the last call,
        the newest last), of which the newest is the frame."""
        if isinstance(img, (list, tuple)) and not img:
            img = None
        elif isinstance(img, (list, tuple)) and is_frame(img[0]):
            img = img[-1]
        if img is None:
            return struct.pack("<III", 0, 0, 0)
        if np is not None:
            a = np.asarray(img)
            if a.ndim != 3 or a.shape[2] not in (3, 4):
                raise ValueError("envs gym bridge: render() gave an array of shape %r, want (height, width, 3)" % (a.shape,))
            return struct.pack("<III", *a.shape) + np.ascontiguousarray(a, dtype=np.uint8).tobytes()
        rows = [list(r) for r in img]
        h, w, c = len(rows), len(rows[0]) if rows else 0, len(rows[0][0]) if rows and rows[0] else 0
        return struct.pack("<III", h, w, c) + bytes(int(v) for r in rows for p in r for v in p)

    every = list(range(n))
    current = [0]  # the env being called, for naming it in an exception
    while True:
        msg = read()
        if msg is None or msg[:1] == b"C":
            break
        tag, current[0] = msg[:1], 0
        try:
            if tag == b"R":
                i, seed = struct.unpack("<Iq", msg[1:13])
                reset([i], [seed])
            elif tag == b"S":
                (i,) = struct.unpack("<I", msg[1:5])
                step([i], struct.unpack("<%df" % nact, msg[5:]), False)
            elif tag == b"A":
                reset(every, struct.unpack("<%dq" % n, msg[1:]))
            elif tag == b"P":
                (i,) = struct.unpack("<I", msg[1:5])
                current[0] = i
                write(b"I", frame(envs[i].render()))
            elif tag == b"V":
                step(every, struct.unpack("<%df" % (n * nact), msg[1:]), True)
            else:
                raise ValueError("envs gym bridge: unknown request %r" % tag)
        except Exception:
            error(current[0])
    for env in envs:
        close = getattr(env, "close", None)
        if close is not None:
            close()


main()
