package cli

import (
	"fmt"
	"strings"

	"github.com/evolverl/evolve/evo"
)

// configDiff names the keys whose values differ between two configs, as
// "key: A in the run, B here" phrases (at most five, then how many more),
// so that a refusal to reuse a run directory says what differs; "" when
// the configs cannot be compared.
func configDiff(run, here evo.Config) string {
	changes, err := evo.ConfigChanges(run, here)
	if err != nil {
		return ""
	}
	shown := changes[:min(len(changes), 5)]
	parts := make([]string, len(shown), len(shown)+1)
	for i, c := range shown {
		parts[i] = fmt.Sprintf("%s: %s in the run, %s here", c.Key, c.Was, c.Now)
	}
	if n := len(changes) - len(shown); n > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", n))
	}
	return strings.Join(parts, "; ")
}
