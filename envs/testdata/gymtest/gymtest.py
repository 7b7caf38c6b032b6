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
        if self.render_mode != "rgb_array":
            return None
        return [[[self.t, 10 * r + c, 255] for c in range(3)] for r in range(2)]
