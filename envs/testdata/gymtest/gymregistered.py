"""A Gymnasium env registered with a time limit of 20 steps that renders
without pygame: made with render_mode="rgb_array_list", Gymnasium's make
puts its RenderCollection above the TimeLimit. Needs gymnasium and numpy
(the tests that import it skip without them)."""

import gymnasium
import numpy as np


class Counter(gymnasium.Env):
    metadata = {"render_modes": ["rgb_array"]}  # "rgb_array_list" through RenderCollection

    def __init__(self, render_mode=None):
        self.render_mode = render_mode
        self.observation_space = gymnasium.spaces.Box(0, 1000, (1,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(2)
        self.t = 0

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.array([0], np.float32), {}

    def step(self, action):
        self.t += 1
        return np.array([self.t], np.float32), 1.0, False, False, {}

    def render(self):
        return np.zeros((4, 4, 3), np.uint8)


gymnasium.register(id="Counter-v0", entry_point=Counter, max_episode_steps=20)
