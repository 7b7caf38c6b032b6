package envs

import (
	"errors"
	"strings"
	"testing"
)

func TestBuiltinEnvsPassCheck(t *testing.T) {
	for _, id := range IDs() {
		if strings.HasPrefix(id, "Test") {
			continue // registered by other tests
		}
		t.Run(id, func(t *testing.T) {
			env, err := Make(id, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := Check(env, CheckOptions{Steps: 600, Seed: 3}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// brokenEnv wraps CartPole and breaks one rule.
type brokenEnv struct {
	*CartPole
	fault string
	calls int
}

func (b *brokenEnv) ActionSpace() Space {
	if b.fault == "bad space" {
		return Discrete{N: 0}
	}
	return b.CartPole.ActionSpace()
}

func (b *brokenEnv) Reset(seed int64) ([]float32, Info) {
	b.calls++
	obs, info := b.CartPole.Reset(seed)
	if b.fault == "random start" {
		obs[0] = float32(b.calls) * 1e-3
	}
	return obs, b.info(info)
}

func (b *brokenEnv) Step(a []float32) ([]float32, float64, bool, bool, Info) {
	obs, r, term, trunc, info := b.CartPole.Step(a)
	switch b.fault {
	case "short obs":
		obs = obs[:3]
	case "outside space":
		obs[0] = 100
	case "nan reward":
		r = r * 0 / 0
	case "panic":
		panic("boom")
	}
	return obs, r, term, trunc, b.info(info)
}

func (b *brokenEnv) info(info Info) Info {
	switch b.fault {
	case "mask length":
		info.ActionMask = []bool{true, true, true}
	case "empty mask":
		info.ActionMask = []bool{false, false}
	}
	return info
}

func TestCheckFindsProblems(t *testing.T) {
	tests := []struct{ fault, want string }{
		{"bad space", "action space"},
		{"random start", "not deterministic"},
		{"short obs", "observation has 3 values, want 4"},
		{"outside space", "outside Box"},
		{"nan reward", "reward NaN is not finite"},
		{"panic", "panicked: boom"},
		{"mask length", "action mask has 3 entries, want 2"},
		{"empty mask", "no legal action"},
	}
	for _, tt := range tests {
		t.Run(tt.fault, func(t *testing.T) {
			err := Check(&brokenEnv{CartPole: NewCartPole(), fault: tt.fault}, CheckOptions{Steps: 50})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Check: %v, want an error mentioning %q", err, tt.want)
			}
			// Matched as CheckOutput's are; a panic says where, not a whole
			// stack; a problem of every step is listed a few times only.
			if !errors.Is(err, ErrBadOutput) {
				t.Errorf("Check's error does not match ErrBadOutput: %v", err)
			}
			if msg := err.Error(); strings.Contains(msg, "goroutine ") || strings.Count(msg, "\n") > maxProblems+2 {
				t.Errorf("Check's error has %d lines:\n%s", strings.Count(msg, "\n")+1, msg)
			}
			if tt.fault == "panic" && !strings.Contains(err.Error(), "check_test.go:") {
				t.Errorf("a panic's problem does not say where: %v", err)
			}
			// A fault of every step is one line with its count; NaN at
			// the same step of both runs is not randomness.
			if tt.fault != "random start" && tt.fault != "bad space" && tt.fault != "panic" {
				if msg := err.Error(); strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "more times)") {
					t.Errorf("a problem of every step, not once with its count:\n%s", msg)
				}
			}
		})
	}
}

// panicOnIllegal is a masked env that panics when given a masked action.
type panicOnIllegal struct{ ConnectFour }

func (p *panicOnIllegal) Step(a []float32) ([]float32, float64, bool, bool, Info) {
	if p.board[0][int(a[0])] != 0 {
		panic("illegal move")
	}
	return p.ConnectFour.Step(a)
}

func TestCheckFlagsEnvsThatPanicOnIllegalActions(t *testing.T) {
	c, _ := NewConnectFour(OpponentRandom, false)
	err := Check(&panicOnIllegal{*c}, CheckOptions{Steps: 200})
	if err == nil || !strings.Contains(err.Error(), "illegal action") {
		t.Fatalf("Check: %v, want a problem naming the illegal action", err)
	}
}
