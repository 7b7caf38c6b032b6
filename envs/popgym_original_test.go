package envs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"testing"
	"time"

	"github.com/evolverl/evolve/internal/pytest"
)

// popgymScript plays POPGym's own envs under the policies below and prints
// every episode (see its doc string).
const popgymScript = "testdata/popgym/popgym_episodes.py"

// popgymPolicy is a fixed policy, played alike by the test and by
// popgymScript (its JSON is the script's input). Kinds: "uniform" (a
// uniformly random action), "constant" (Action every step), "lean" (for
// CartPole: push the way the observed pole leans) and "answer" (the
// task's right answer, worked out from the observations, with probability
// P, else a uniform guess; Task is "repeat" with its K, "count" or
// "autoencode").
type popgymPolicy struct {
	Kind   string  `json:"kind"`
	Action int     `json:"action"`
	P      float64 `json:"p,omitempty"`
	Task   string  `json:"task,omitempty"`
	K      int     `json:"k,omitempty"`
}

func (p popgymPolicy) String() string {
	switch p.Kind {
	case "constant":
		return fmt.Sprintf("constant-%d", p.Action)
	case "answer":
		return fmt.Sprintf("answer-p%g", p.P)
	}
	return p.Kind
}

// popgymEpisodes holds what one policy's episodes gave: their returns,
// lengths and observation digests (FNV-1a over the float32 bits of every
// observation, the first included).
type popgymEpisodes struct {
	Returns []float64 `json:"returns"`
	Lengths []float64 `json:"lengths"`
	Digests []string  `json:"digests"`
}

// popgymComparison is one env compared: the policies it is played under,
// and whether the port draws exactly what POPGym draws (the card games
// and the noiseless CartPole), so that the two sides' episodes must be
// identical and not merely alike.
type popgymComparison struct {
	id       string
	exact    bool
	policies []popgymPolicy
}

// popgymComparisons lists every env and difficulty with the policies that
// expose its rules: the card games under uniform, constant and
// half-right answers (which turn on what the right answer is: the suit k
// steps back, the count with the current card, the reverse order), the
// CartPoles under uniform, constant and leaning pushes (the last lives
// long enough to meet the time limit and, noisy, turns on the noise's
// size).
func popgymComparisons() []popgymComparison {
	uniform, constant := popgymPolicy{Kind: "uniform"}, popgymPolicy{Kind: "constant"}
	var cases []popgymComparison
	for _, l := range []struct {
		level string
		k     int
	}{{"Easy", 4}, {"Medium", 32}, {"Hard", 64}} {
		cases = append(cases,
			popgymComparison{"popgym-RepeatPrevious" + l.level + "-v0", true,
				[]popgymPolicy{uniform, constant, {Kind: "answer", P: 0.5, Task: "repeat", K: l.k}}},
			popgymComparison{"popgym-CountRecall" + l.level + "-v0", true,
				[]popgymPolicy{uniform, constant, {Kind: "answer", P: 0.5, Task: "count"}}},
			popgymComparison{"popgym-Autoencode" + l.level + "-v0", true,
				[]popgymPolicy{uniform, constant, {Kind: "answer", P: 0.5, Task: "autoencode"}}},
			popgymComparison{"popgym-PositionOnlyCartPole" + l.level + "-v0", true,
				[]popgymPolicy{uniform, constant, {Kind: "lean"}}},
			popgymComparison{"popgym-NoisyPositionOnlyCartPole" + l.level + "-v0", false,
				[]popgymPolicy{uniform, constant, {Kind: "lean"}}})
	}
	return cases
}

// TestPOPGymMatchesOriginal plays every ported env and difficulty, and the
// same env of POPGym itself (popgymScript, run where Python, NumPy,
// Gymnasium and POPGym's source, $EVOLVE_POPGYM_SRC, are at hand; skipped
// elsewhere, CI included), under each fixed policy for 2,000 episodes (200
// with -short or -race), the first seeded and the rest continuing the env's
// stream. Mean return and mean length must each lie within 4 combined
// standard errors of the original's; where the port deals what POPGym
// deals, every episode's return, length and observations must be the
// original's.
func TestPOPGymMatchesOriginal(t *testing.T) {
	python := pytest.POPGym(t)
	episodes := 2000
	if testing.Short() || raceBuild {
		episodes = 200
	}
	const seed = 1
	for _, c := range popgymComparisons() {
		t.Run(c.id, func(t *testing.T) {
			want := runPOPGymScript(t, python, c, episodes, seed)
			env, err := Make(c.id, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range c.policies {
				got := playPOPGym(env, p, episodes, seed)
				key := c.id + " " + p.String()
				for _, m := range []struct {
					name     string
					got, ref []float64
				}{{"return", got.Returns, want[i].Returns}, {"length", got.Lengths, want[i].Lengths}} {
					mean, sd := meanStd(m.ref)
					agreesWithOriginal(t, key+" "+m.name, m.got, mean, sd, float64(len(m.ref)))
					gm, gsd := meanStd(m.got)
					t.Logf("%s %s: port %.4f ± %.4f, original %.4f ± %.4f (mean ± standard error)",
						key, m.name, gm, gsd/math.Sqrt(float64(len(m.got))), mean, sd/math.Sqrt(float64(len(m.ref))))
				}
				if c.exact {
					sameEpisodes(t, key, got, want[i])
				}
			}
		})
	}
}

// sameEpisodes requires every episode of the port to be the original's.
func sameEpisodes(t *testing.T, key string, got, want popgymEpisodes) {
	t.Helper()
	if len(got.Returns) != len(want.Returns) || len(want.Digests) != len(want.Returns) {
		t.Fatalf("%s: %d episodes, the original %d (%d digests)", key, len(got.Returns), len(want.Returns), len(want.Digests))
	}
	for ep := range got.Returns {
		if got.Returns[ep] != want.Returns[ep] || got.Lengths[ep] != want.Lengths[ep] || got.Digests[ep] != want.Digests[ep] {
			t.Errorf("%s: episode %d returned %v in %v steps (observations %s), the original %v in %v (%s)", key, ep,
				got.Returns[ep], got.Lengths[ep], got.Digests[ep], want.Returns[ep], want.Lengths[ep], want.Digests[ep])
			return
		}
	}
	t.Logf("%s: all %d episodes identical to the original's", key, len(got.Returns))
}

// runPOPGymScript plays c's policies on POPGym's env in Python.
func runPOPGymScript(t *testing.T, python string, c popgymComparison, episodes int, seed int64) []popgymEpisodes {
	t.Helper()
	req, err := json.Marshal(map[string]any{"id": c.id, "episodes": episodes, "seed": seed, "policies": c.policies})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, popgymScript)
	cmd.Stdin = bytes.NewReader(req)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", python, popgymScript, err, stderr.String())
	}
	var res struct {
		Gymnasium, NumPy string
		Results          []popgymEpisodes
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%s: output: %v", popgymScript, err)
	}
	if len(res.Results) != len(c.policies) {
		t.Fatalf("%s: %d results for %d policies", popgymScript, len(res.Results), len(c.policies))
	}
	t.Logf("%s: POPGym under Gymnasium %s, NumPy %s", c.id, res.Gymnasium, res.NumPy)
	return res.Results
}

// playPOPGym plays episodes of env under p as popgymScript plays them:
// episode 0 reset with seed, the others continuing the stream, the
// policy's random numbers SplitMix64's from seed.
func playPOPGym(env Env, p popgymPolicy, episodes int, seed int64) popgymEpisodes {
	rng := &splitMixStream{state: uint64(seed)}
	n := env.ActionSpace().(Discrete).N
	var res popgymEpisodes
	for ep := range episodes {
		s := NoSeed
		if ep == 0 {
			s = seed
		}
		obs, _ := env.Reset(s)
		memory := popgymMemory{task: p.Task, k: p.K}
		memory.observe(obs)
		h := fnvObs(0xcbf29ce484222325, obs)
		ret, length := 0.0, 0
		for {
			a := p.act(obs, &memory, rng, n)
			var r float64
			var term, trunc bool
			obs, r, term, trunc, _ = env.Step([]float32{float32(a)})
			memory.observe(obs)
			h = fnvObs(h, obs)
			ret += r
			length++
			if term || trunc {
				break
			}
		}
		res.Returns = append(res.Returns, ret)
		res.Lengths = append(res.Lengths, float64(length))
		res.Digests = append(res.Digests, fmt.Sprintf("0x%016x", h))
	}
	return res
}

// act is the policy's action for observation obs.
func (p popgymPolicy) act(obs []float32, memory *popgymMemory, rng *splitMixStream, n int) int {
	switch p.Kind {
	case "constant":
		return p.Action
	case "lean":
		if obs[1] > 0 {
			return 1
		}
		return 0
	case "uniform":
		return int(rng.next() % uint64(n))
	}
	// The answer is worked out every step so that the memory keeps up.
	right := memory.answer()
	if float64(rng.next()>>11)*0x1p-53 < p.P {
		return right
	}
	return int(rng.next() % uint64(n))
}

// splitMixStream is the sequence of SplitMix64 outputs from a seed.
type splitMixStream struct{ state uint64 }

func (s *splitMixStream) next() uint64 {
	z := splitmix64(s.state) // adds the increment itself
	s.state += 0x9e3779b97f4a7c15
	return z
}

// popgymMemory works out a card game's right answer from its
// observations, as a perfect memory would.
type popgymMemory struct {
	task    string
	k       int
	seen    []int // repeat: the suits shown; autoencode: the suits still to name
	counts  [13]int
	query   int
	playing bool
}

func (m *popgymMemory) observe(obs []float32) {
	switch {
	case m.task == "repeat":
		m.seen = append(m.seen, int(obs[0]))
	case m.task == "count":
		m.counts[int(obs[0])]++
		m.query = int(obs[1])
	case m.task == "autoencode" && !m.playing:
		m.seen = append(m.seen, int(obs[1]))
		m.playing = obs[0] == 0
	}
}

// answer returns the right answer to the next step (0 where none is
// scored).
func (m *popgymMemory) answer() int {
	switch m.task {
	case "repeat":
		if s := len(m.seen); s >= m.k {
			return m.seen[s-m.k]
		}
		return 0
	case "count":
		return m.counts[m.query]
	}
	if !m.playing || len(m.seen) == 0 {
		return 0
	}
	a := m.seen[len(m.seen)-1]
	m.seen = m.seen[:len(m.seen)-1]
	return a
}

// fnvObs folds the float32 bits of obs into the FNV-1a hash h.
func fnvObs(h uint64, obs []float32) uint64 {
	for _, v := range obs {
		h ^= uint64(math.Float32bits(v))
		h *= 0x100000001b3
	}
	return h
}
