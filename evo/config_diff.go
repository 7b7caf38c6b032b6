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
const maxListedChanges = 6

// configChanges names the keys whose values differ between two configs'
// TOML as Config.TOML writes them, was (a checkpoint's) and now
// (config.toml's), each as "key = now (the checkpoint's: was)", sorted by
// key; nil when either does not decode or nothing differs.
func configChanges(was, now []byte) []string {
	var a, b map[string]any
	if _, err := toml.Decode(string(was), &a); err != nil {
		return nil
	}
	if _, err := toml.Decode(string(now), &b); err != nil {
		return nil
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
	var out []string
	for _, k := range keys {
		va, oka := fa[k]
		vb, okb := fb[k]
		if oka && okb && reflect.DeepEqual(va, vb) {
			continue
		}
		out = append(out, fmt.Sprintf("%s = %s (the checkpoint's: %s)", k, tomlValue(vb, okb), tomlValue(va, oka)))
	}
	return out
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

// listChanges joins changes for an error, naming at most
// maxListedChanges of them and counting the rest.
func listChanges(changes []string) string {
	if len(changes) <= maxListedChanges {
		return strings.Join(changes, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(changes[:maxListedChanges], "; "), len(changes)-maxListedChanges)
}
