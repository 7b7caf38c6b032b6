"""Gymnasium-like test envs for envs/gym_test.go, standard library only.

Spaces are described by the bridge's dict protocol (see envs/gymbridge.py).
"""
import os
import random
import time

BOX = {"type": "Box", "shape": [2, 3], "dtype": "float32",
       "low": [-1, float("-inf"), 0, -2, -2, -2], "high": [1, 5, float("inf"), 2, 2, 2]}
ACTIONS = {"type": "Dict", "spaces": {
    "d": {"type": "Discrete", "n": 3, "start": 1},
    "md": {"type": "MultiDiscrete", "nvec": [2, 3]},
    "mb": {"type": "MultiBinary", "n": 2},
    "box": {"type": "Box", "shape": [2], "dtype": "float32", "low": -1.0, "high": 1.0},
}}


class AllSpaces:
    """Observes a Dict of every space kind; the discrete parts echo the last
    action, the box is random (seeded by reset)."""

    observation_space = {"type": "Dict", "spaces": {
        "box": BOX,
        "d": {"type": "Discrete", "n": 3, "start": 1},
        "md": {"type": "MultiDiscrete", "nvec": [2, 3]},
        "mb": {"type": "MultiBinary", "n": 2},
    }}
    action_space = ACTIONS

    def __init__(self, scale=1.0):
        self.scale = scale
        self.rng = random.Random(0)

    def _obs(self, a):
        box = [[self.rng.uniform(-1, 1) * self.scale for _ in range(3)] for _ in range(2)]
        return {"box": box, "d": a["d"], "md": a["md"], "mb": a["mb"]}

    def reset(self, seed=None):
        if seed is not None:
            self.rng = random.Random(seed)
        print("a stray print must not break the protocol")
        return self._obs({"d": 1, "md": [0, 0], "mb": [0, 0]}), {}

    def step(self, a):
        assert isinstance(a["d"], int) and len(a["box"]) == 2, a
        r = sum(a["box"])
        return self._obs(a), r, a["d"] == 3, False, {}


class Masked:
    """Discrete(4) actions; info["action_mask"] allows a random subset
    (never empty). Ends after 5 steps."""

    observation_space = {"type": "Box", "shape": [1], "low": 0, "high": 10, "dtype": "float32"}
    action_space = {"type": "Discrete", "n": 4}

    def __init__(self):
        self.rng = random.Random(0)
        self.t = 0

    def _mask(self):
        m = [self.rng.random() < 0.5 for _ in range(4)]
        m[self.rng.randrange(4)] = True
        return m

    def reset(self, seed=None):
        if seed is not None:
            self.rng = random.Random(seed)
        self.t = 0
        return [0.0], {"action_mask": self._mask()}

    def step(self, a):
        self.t += 1
        return [float(self.t)], 1.0, self.t >= 5, False, {"action_mask": self._mask()}


class Raises(Masked):
    def step(self, a):
        raise ValueError("boom from gymtest")


class Crashes(Masked):
    def step(self, a):
        os._exit(3)


class Hangs(Masked):
    def step(self, a):
        time.sleep(60)


class BadSpace(Masked):
    action_space = {"type": "Tuple", "spaces": []}


class FailsInit:
    def __init__(self):
        raise RuntimeError("cannot build gymtest env")


class RaisesInSecond(Masked):
    """Raises in step in the second instance made in this process, so that
    a vector's error must name env 1."""

    made = 0

    def __init__(self):
        super().__init__()
        RaisesInSecond.made += 1
        self.raises = RaisesInSecond.made == 2

    def step(self, a):
        if self.raises:
            raise ValueError("boom from the second env")
        return super().step(a)


class ScaleReward:
    """A wrapper in Gymnasium's shape: multiplies the reward by factor."""

    def __init__(self, env, factor=1.0):
        self.env, self.factor = env, factor
        self.observation_space, self.action_space = env.observation_space, env.action_space

    def reset(self, seed=None):
        return self.env.reset(seed=seed)

    def step(self, a):
        obs, r, term, trunc, info = self.env.step(a)
        return obs, r * self.factor, term, trunc, info


class SlowInit(Masked):
    """Takes longer to build than a test's start_timeout."""

    def __init__(self):
        time.sleep(30)
        super().__init__()


class Paints(Masked):
    """render() gives a 2×3 RGB frame whose red channel counts steps;
    render_mode None renders nothing, as Gymnasium's envs do."""

    def __init__(self, render_mode=None):
        super().__init__()
        self.render_mode = render_mode

    def render(self):
        frame = [[[self.t, 10 * r + c, 255] for c in range(3)] for r in range(2)]
        if self.render_mode == "rgb_array_list":
            # As Gymnasium's RenderCollection: the frames since the last
            # call, the newest last.
            return [[[[0, 0, 0] for c in range(3)] for r in range(2)], frame]
        if self.render_mode != "rgb_array":
            return None
        return frame


class SeedEcho(Masked):
    """Observes the seed its last reset got, as two 16-bit halves (exact in
    float32), and refuses seeds outside [0, 2**32) as NumPy's legacy
    RandomState does."""

    observation_space = {"type": "Box", "shape": [2], "low": 0, "high": 65535, "dtype": "float32"}

    def reset(self, seed=None):
        if seed is not None and not 0 <= seed < 2**32:
            raise ValueError("Seed must be between 0 and 2**32 - 1")
        self.seed = seed if seed is not None else -1
        return [float(self.seed >> 16), float(self.seed & 0xFFFF)], {}


class LegacyRandom(Masked):
    """Draws its observations from NumPy's legacy RandomState, seeded by
    reset as MinAtar seeds it (so it needs NumPy)."""

    observation_space = {"type": "Box", "shape": [2], "low": 0, "high": 1000, "dtype": "float32"}

    def reset(self, seed=None):
        import numpy as np
        if seed is not None:
            self.random = np.random.RandomState(seed)
        return self.random.randint(0, 1000, size=2), {}


class BoolObs(Masked):
    """Observes bools (NumPy's when it is there, Python's otherwise) in a
    uint8 Box, as MinAtar's Gymnasium class does: the last action's bits."""

    observation_space = {"type": "Box", "shape": [2, 2], "low": 0, "high": 1, "dtype": "uint8"}

    def _obs(self, a):
        bits = [[bool(a & 1), bool(a & 2)], [False, True]]
        try:
            import numpy as np
        except ImportError:
            return bits
        return np.array(bits, dtype=bool)

    def reset(self, seed=None):
        self.t = 0
        return self._obs(0), {}

    def step(self, a):
        self.t += 1
        return self._obs(a), 0.0, self.t >= 5, False, {}


REGISTERED = []


def register(name="NeedsRegister"):
    """Registers NeedsRegister, as packages such as MinAtar register their
    envs in a function (the option import's "gymtest:register")."""
    REGISTERED.append(name)


class NeedsRegister(Masked):
    """Builds only after register() has run."""

    def __init__(self):
        if not REGISTERED:
            raise RuntimeError("NeedsRegister: call gymtest.register() first")
        super().__init__()


class RenderRaises(Masked):
    """render() raises as Gymnasium's classic-control envs do without
    pygame."""

    def render(self):
        raise RuntimeError("DependencyNotInstalled: pygame is not installed, run `pip install gymnasium[classic-control]`")


class IntBoxEcho(Masked):
    """Integer Box(-2, 2, (3,)) actions, observed back as they arrive."""

    observation_space = {"type": "Box", "shape": [3], "low": -2, "high": 2, "dtype": "float32"}
    action_space = {"type": "Box", "shape": [3], "low": -2, "high": 2, "dtype": "int64"}

    def reset(self, seed=None):
        return [0, 0, 0], {}

    def step(self, a):
        assert all(int(v) == v for v in a), a  # ints, or NumPy's
        return [int(v) for v in a], 0.0, False, False, {}


IMAGE_H, IMAGE_W, IMAGE_C = 2, 3, 2


class ImageHWC(Masked):
    """A [2, 3, 2] (H, W, C) Box whose value at (h, w, c) is
    100h + 10w + c + t (t the step), and whose low bound there is its
    negative at t = 0."""

    observation_space = {"type": "Box", "shape": [IMAGE_H, IMAGE_W, IMAGE_C], "dtype": "float32",
                         "low": [-(100 * h + 10 * w + c) for h in range(IMAGE_H) for w in range(IMAGE_W) for c in range(IMAGE_C)],
                         "high": 1000}

    def _image(self):
        return [[[100 * h + 10 * w + c + self.t for c in range(IMAGE_C)] for w in range(IMAGE_W)] for h in range(IMAGE_H)]

    def reset(self, seed=None):
        self.t = 0
        return self._image(), {}

    def step(self, a):
        self.t += 1
        return self._image(), 0.0, False, False, {}


class ImageCHW(Masked):
    """A [2, 4, 4] Box: two 4×4 channels, already channels-first."""

    observation_space = {"type": "Box", "shape": [2, 4, 4], "dtype": "float32", "low": 0, "high": 1}

    def reset(self, seed=None):
        return [[[0.0] * 4] * 4] * 2, {}

    def step(self, a):
        return [[[0.0] * 4] * 4] * 2, 0.0, False, False, {}


class OldAPI(Masked):
    """The old Gym API: reset returns the observation alone, step four
    values (observation, reward, done, info)."""

    def reset(self, seed=None):
        return [0.0]

    def step(self, a):
        return [0.0], 0.0, False, {}


class OldStep(Masked):
    """The new reset with the old step's four values."""

    def step(self, a):
        return [0.0], 0.0, False, {}
