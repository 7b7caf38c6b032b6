package cli

import (
	"errors"
	"maps"
	"strings"

	"github.com/evolverl/evolve/envs"
)

// envOptionFlags are play's -env-option KEY=VALUE overrides of the env's
// options, in order (a later one of a key wins).
type envOptionFlags []string

func (o *envOptionFlags) String() string { return strings.Join(*o, " ") }

// Set implements flag.Value: KEY=VALUE, KEY an [env.options] key.
func (o *envOptionFlags) Set(v string) error {
	key, _, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(key) == "" || strings.ContainsAny(key, ". ") {
		return errors.New("want KEY=VALUE, KEY an [env.options] key, e.g. python=/usr/bin/python3")
	}
	*o = append(*o, v)
	return nil
}

// apply returns opts with the overrides set (VALUE read as a TOML value,
// or as a string when it is not one), and the flags as a phrase for
// messages ("" without any). opts is not changed.
func (o envOptionFlags) apply(opts envs.Options) (envs.Options, string) {
	if len(o) == 0 {
		return opts, ""
	}
	out := envs.Options(maps.Clone(map[string]any(opts)))
	if out == nil {
		out = envs.Options{}
	}
	flags := make([]string, len(o))
	for i, v := range o {
		key, raw, _ := strings.Cut(v, "=")
		out[strings.TrimSpace(key)] = tomlValue(raw)
		flags[i] = "-env-option " + shellQuote(v)
	}
	return out, " with " + strings.Join(flags, " ")
}
