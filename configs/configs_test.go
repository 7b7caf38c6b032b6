package configs

import (
	"bytes"
	"testing"
)

// TestReadTakesTheCheckoutPath: a shipped config reads the same by name, by
// file name and by its path in a checkout (the README's commands use that
// path; an installed evolve has no checkout to read it from).
func TestReadTakesTheCheckoutPath(t *testing.T) {
	want, err := Read("cartpole")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cartpole.toml", "configs/cartpole.toml", "./configs/cartpole.toml", "configs/zoo/../cartpole.toml"} {
		if got, err := Read(name); err != nil || !bytes.Equal(got, want) {
			t.Errorf("Read(%q): %d bytes, %v", name, len(got), err)
		}
	}
	if _, err := Read("configs/nosuch.toml"); err == nil {
		t.Error("a config that is not shipped was read")
	}
}
