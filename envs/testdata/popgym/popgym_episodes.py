"""Plays POPGym's own envs under fixed policies and prints every episode's
return, length and observation digest as JSON, for envs/popgym_original_test.go
to hold the Go ports to.

The test runs it itself where Python, NumPy, Gymnasium and POPGym import
(POPGym's source directory named by EVOLVE_POPGYM_SRC); by hand:

    echo '{"id": "popgym-RepeatPreviousEasy-v0", "episodes": 10, "seed": 1,
           "policies": [{"kind": "uniform"}]}' | python3 envs/testdata/popgym/popgym_episodes.py

Episode 0 is reset with the seed, later ones continue the env's generator
(reset() without a seed), as the Go side does with Reset(seed) then
Reset(NoSeed). The policies' random numbers come from SplitMix64 seeded with
the seed, which the Go test computes alike, so that where a port deals what
POPGym deals the two sides play the very same episodes.
"""
import json
import struct
import sys

import gymnasium as gym
import numpy as np

import popgym  # noqa: F401 (registers the popgym-* ids)

MASK64 = (1 << 64) - 1


class SplitMix64:
    """Steele, Lea and Flood's SplitMix64: the policies' random numbers."""

    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)


class Memory:
    """The right answer of a card game, worked out from its observations."""

    def __init__(self, task, k):
        self.task, self.k = task, k
        self.seen = []  # repeat: suits shown; autoencode: suits still to name
        self.counts = {}
        self.query = 0
        self.playing = False

    def observe(self, obs):
        if self.task == "repeat":
            self.seen.append(int(obs[0]))
        elif self.task == "count":
            value, self.query = int(obs[0]), int(obs[1])
            self.counts[value] = self.counts.get(value, 0) + 1
        elif self.task == "autoencode" and not self.playing:
            self.seen.append(int(obs[1]))
            self.playing = obs[0] == 0

    def answer(self):
        """The scored answer to the next step (0 where none is scored)."""
        if self.task == "repeat":
            s = len(self.seen)
            return self.seen[s - self.k] if s >= self.k else 0
        if self.task == "count":
            return self.counts.get(self.query, 0)
        if self.playing:
            return self.seen.pop()
        return 0


def act(policy, obs, memory, rng, n):
    kind = policy["kind"]
    if kind == "constant":
        return policy["action"]
    if kind == "lean":
        return 1 if obs[1] > 0 else 0
    if kind == "uniform":
        return rng.next() % n
    # "answer": the right answer with probability p, else a uniform guess;
    # the answer is worked out every step, so that the memory keeps up.
    right = memory.answer()
    if (rng.next() >> 11) * 2.0**-53 < policy["p"]:
        return right
    return rng.next() % n


def digest(h, obs):
    """FNV-1a over the float32 bit patterns of the observation's values."""
    for v in obs:
        h ^= struct.unpack("<I", struct.pack("<f", float(v)))[0]
        h = (h * 0x100000001B3) & MASK64
    return h


def play(env, policy, episodes, seed):
    rng = SplitMix64(seed)
    n = int(env.action_space.n)
    returns, lengths, digests = [], [], []
    for ep in range(episodes):
        obs, _ = env.reset(seed=seed) if ep == 0 else env.reset()
        obs = np.asarray(obs, dtype=np.float32).ravel()
        memory = Memory(policy.get("task"), policy.get("k", 0))
        memory.observe(obs)
        h, ret, length = 0xCBF29CE484222325, 0.0, 0
        h = digest(h, obs)
        while True:
            a = act(policy, obs, memory, rng, n)
            obs, r, terminated, truncated, _ = env.step(int(a))
            obs = np.asarray(obs, dtype=np.float32).ravel()
            memory.observe(obs)
            h = digest(h, obs)
            ret += float(r)
            length += 1
            if terminated or truncated:
                break
        returns.append(ret)
        lengths.append(length)
        digests.append("0x%016x" % h)
    return {"returns": returns, "lengths": lengths, "digests": digests}


def main():
    req = json.load(sys.stdin)
    env = gym.make(req["id"])
    results = [play(env, p, req["episodes"], req["seed"]) for p in req["policies"]]
    json.dump({"gymnasium": gym.__version__, "numpy": np.__version__, "results": results}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
