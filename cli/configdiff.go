package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/evolverl/evolve/evo"
)

// configDiff names the keys whose values differ between two configs, as
// "key: A in the run, B here" phrases (at most five, then how many more),
// so that a refusal to reuse a run directory says what differs. It compares
// the configs' canonical TOML (Config.TOML), key by key; out_dir and
// workers never count.
func configDiff(run, here evo.Config) string {
	a, errA := configKeys(run)
	b, errB := configKeys(here)
	if errA != nil || errB != nil {
		return ""
	}
	var keys []string
	for k := range a {
		if a[k] != b[k] {
			keys = append(keys, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	shown := keys[:min(len(keys), 5)]
	parts := make([]string, len(shown))
	value := func(m map[string]string, k string) string {
		if v, ok := m[k]; ok {
			return v
		}
		return "unset"
	}
	for i, k := range shown {
		parts[i] = fmt.Sprintf("%s: %s in the run, %s here", k, value(a, k), value(b, k))
	}
	if n := len(keys) - len(shown); n > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", n))
	}
	return strings.Join(parts, "; ")
}

// configKeys returns c's canonical TOML as a map from dotted key to value.
func configKeys(c evo.Config) (map[string]string, error) {
	c.OutDir, c.Population.Workers = "", 0
	b, err := c.TOML()
	if err != nil {
		return nil, err
	}
	keys := map[string]string{}
	section := ""
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[] ") + "."
		default:
			if k, v, ok := strings.Cut(line, "="); ok {
				keys[section+strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
	}
	return keys, nil
}
