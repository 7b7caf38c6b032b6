package evo

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestEveryTypeErrorIsNamed: the TOML decoder stops at the first value of
// the wrong type, so a config with several took as many runs to fix; each
// is now named with its line, in the file's order, with the unknown keys
// after them, by ParseConfig and by CheckKeys (-set).
func TestEveryTypeErrorIsNamed(t *testing.T) {
	data := []byte(`[env]
id = "CartPole-v1"
num_envs = 4.5

[population]
size = "8"

[ppo]
gamma = 0.99
lr = "3e-4"
update_epochs = [4]

[net.mlp]
hidden = 64

[pbt]
quantile = "0.2"

[ppo2]
x = 1
`)
	want := []string{
		"line 3: env.num_envs: want integer (got float)",
		"line 6: population.size: want integer (got string)",
		"line 10: ppo.lr: want float (got string)",
		"line 11: ppo.update_epochs: want integer (got array)",
		"line 14: net.mlp.hidden: want array (got integer)",
		"line 17: pbt.quantile: want float (got string)",
		"unknown keys: ppo2 (line 19, did you mean ppo?)",
	}
	for name, err := range map[string]error{"ParseConfig": second(ParseConfig(data)), "CheckKeys": CheckKeys(data)} {
		if !errors.Is(err, ErrBadInput) {
			t.Fatalf("%s: %v; want bad input", name, err)
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != len(want) {
			t.Errorf("%s: %d errors, want %d:\n%v", name, len(lines), len(want), err)
			continue
		}
		for i, w := range want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("%s: error %d is %q, want %q", name, i+1, lines[i], w)
			}
		}
	}
	// A datetime is a type like the others; a key quoted for its dot ends
	// the search, named without a line.
	for data, want := range map[string][]string{
		"[population]\nsize = 8.0\ntarget = 1979-05-27\n": {"line 2: population.size: want integer (got float)",
			"line 3: population.target: want float (got datetime)"},
		"[population]\nsize = \"8\"\n[hp.\"a.b\"]\nmin = \"x\"\n": {"line 2: population.size: want integer (got string)",
			`hp.\"a.b\".min: incompatible types`},
	} {
		err := CheckKeys([]byte(data))
		lines := strings.Split(fmt.Sprint(err), "\n")
		if len(lines) != len(want) {
			t.Errorf("%q: %v; want %d errors", data, err, len(want))
			continue
		}
		for i, w := range want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("%q: error %d is %q, want %q", data, i+1, lines[i], w)
			}
		}
	}
	// One type error alone is said as before.
	one := []byte("[population]\nsize = \"8\"\n")
	if err := CheckKeys(one); err == nil || err.Error() != "line 2: population.size: want integer (got string)" {
		t.Errorf("one type error: %v", err)
	}
}

// second returns the error of a two-valued call.
func second[T any](_ T, err error) error { return err }
