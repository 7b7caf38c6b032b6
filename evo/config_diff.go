package evo

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// maxListedChanges is how many changed keys an error names before it
// counts the rest.
const maxListedChanges = 5

// ConfigChange is a key whose value differs between two configs: Key
// dotted (ppo.lr, hp.lr.min), Was and Now its values as a config file
// writes them, or "unset" where a config does not have the key.
type ConfigChange struct {
	Key, Was, Now string
}

// ConfigChanges lists the keys whose values differ between the configs
// was and now, sorted by key, comparing their canonical TOML
// (Config.TOML) value by value; out_dir and population.workers, which
// never change a run's results, do not count.
func ConfigChanges(was, now Config) ([]ConfigChange, error) {
	var b [2][]byte
	for i, c := range []Config{was, now} {
		c.OutDir, c.Population.Workers = "", 0
		t, err := c.TOML()
		if err != nil {
			return nil, err
		}
		b[i] = t
	}
	return tomlChanges(b[0], b[1])
}

// tomlChanges is ConfigChanges over two configs' TOML.
func tomlChanges(was, now []byte) ([]ConfigChange, error) {
	var a, b map[string]any
	if _, err := toml.Decode(string(was), &a); err != nil {
		return nil, err
	}
	if _, err := toml.Decode(string(now), &b); err != nil {
		return nil, err
	}
	fa, fb := map[string]any{}, map[string]any{}
	flattenTOML("", a, fa)
	flattenTOML("", b, fb)
	var keys []string
	for k := range fa {
		keys = append(keys, k)
	}
	for k := range fb {
		if _, ok := fa[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []ConfigChange
	for _, k := range keys {
		va, oka := fa[k]
		vb, okb := fb[k]
		// Compared as written: 200 and 200.0 differ (as their digests
		// do), nan and nan do not.
		was, now := tomlValue(va, oka), tomlValue(vb, okb)
		if was != now {
			out = append(out, ConfigChange{Key: k, Was: was, Now: now})
		}
	}
	return out, nil
}

// flattenTOML puts every value of the decoded table t into flat under its
// dotted key (prefix, then the key); tables in arrays are numbered
// (key[0].field).
func flattenTOML(prefix string, t map[string]any, flat map[string]any) {
	for k, v := range t {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		switch v := v.(type) {
		case map[string]any:
			flattenTOML(key, v, flat)
		case []map[string]any:
			for i, sub := range v {
				flattenTOML(fmt.Sprintf("%s[%d]", key, i), sub, flat)
			}
		case []any:
			if tables, ok := tableList(v); ok {
				for i, sub := range tables {
					flattenTOML(fmt.Sprintf("%s[%d]", key, i), sub, flat)
				}
			} else {
				flat[key] = v
			}
		default:
			flat[key] = v
		}
	}
}

// tableList returns the tables of v, an array of inline tables; false
// when v is empty or holds anything else.
func tableList(v []any) ([]map[string]any, bool) {
	tables := make([]map[string]any, len(v))
	for i, x := range v {
		t, ok := x.(map[string]any)
		if !ok {
			return nil, false
		}
		tables[i] = t
	}
	return tables, len(v) > 0
}

// tomlValue shows a decoded value as a config file writes it, or "unset"
// for a key the config does not have.
func tomlValue(v any, ok bool) string {
	if !ok {
		return "unset"
	}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(map[string]any{"v": v}); err != nil {
		return fmt.Sprint(v)
	}
	text, found := strings.CutPrefix(strings.TrimSpace(b.String()), "v = ")
	if !found {
		return fmt.Sprint(v)
	}
	return text
}

// listChanges joins changes for an error, each as show phrases it, naming
// at most maxListedChanges of them and counting the rest.
func listChanges(changes []ConfigChange, show func(ConfigChange) string) string {
	parts := make([]string, 0, min(len(changes), maxListedChanges)+1)
	for _, c := range changes[:min(len(changes), maxListedChanges)] {
		parts = append(parts, show(c))
	}
	if n := len(changes) - maxListedChanges; n > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", n))
	}
	return strings.Join(parts, "; ")
}
