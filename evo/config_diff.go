package evo

import (
	"fmt"
	"reflect"
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
		if oka && okb && reflect.DeepEqual(va, vb) {
			continue
		}
		out = append(out, ConfigChange{Key: k, Was: tomlValue(va, oka), Now: tomlValue(vb, okb)})
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
		default:
			flat[key] = v
		}
	}
}

// tomlValue shows a decoded value as a config file would write it, or
// "unset" for a key the config does not have.
func tomlValue(v any, ok bool) string {
	if !ok {
		return "unset"
	}
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("%q", v)
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = tomlValue(x, true)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	default:
		return fmt.Sprint(v)
	}
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
