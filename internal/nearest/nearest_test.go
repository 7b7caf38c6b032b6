package nearest

import "testing"

func TestName(t *testing.T) {
	ids := []string{"CartPole-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0", "pop", "pendulum"}
	for _, c := range []struct {
		word string
		max  int
		want string
	}{
		{"Cartpole-v1", 2, "CartPole-v1"}, // case first
		{"CARTPOLE-V1", 0, "CartPole-v1"},
		{"Acrobat-v1", 2, "Acrobot-v1"},
		{"MountainCar-v1", 2, "MountainCar-v0"},
		{"Pendulum-v1", 2, ""},
		{"nope", 2, ""}, // 2 edits from "pop", but a third of a short word is 1
		{"pendulm", 2, "pendulum"},
		{"", 2, ""},
	} {
		if got := Name(c.word, ids, c.max); got != c.want {
			t.Errorf("Name(%q, %d) = %q, want %q", c.word, c.max, got, c.want)
		}
	}
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"lr", "lr", 0}} {
		if got := Distance(c.a, c.b); got != c.d || Distance(c.b, c.a) != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d both ways", c.a, c.b, got, c.d)
		}
	}
}
