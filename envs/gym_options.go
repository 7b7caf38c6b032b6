package envs

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
)

// gymConfig is the JSON configuration the child reads first.
type gymConfig struct {
	ID              string         `json:"id"`
	NumEnvs         int            `json:"num_envs"`
	Import          []string       `json:"import,omitempty"`
	Kwargs          map[string]any `json:"kwargs,omitempty"`
	Wrappers        []gymWrapper   `json:"wrappers,omitempty"`
	ModuleEnv       string         `json:"module_env,omitempty"`
	MaxEpisodeSteps *int           `json:"max_episode_steps,omitempty"`
	ChannelsFirst   bool           `json:"channels_first,omitempty"`
}

// gymWrapper names a Python wrapper class and its keyword arguments.
type gymWrapper struct {
	Name   string         `json:"name"`
	Kwargs map[string]any `json:"kwargs,omitempty"`
}

// gymOptions reads the options of a gym env into the child's
// configuration, the interpreter and the timeout.
func gymOptions(id string, n int, opts Options) (cfg gymConfig, python string, timeout, start time.Duration, err error) {
	if err := opts.Only("python", "import", "kwargs", "wrappers", "module_env", "timeout", "start_timeout", "max_episode_steps", "channels_first"); err != nil {
		return cfg, "", 0, 0, err
	}
	cfg = gymConfig{ID: id, NumEnvs: n}
	python = "python3"
	if v, ok := opts["python"]; ok {
		s, ok := v.(string)
		if !ok || s == "" {
			return cfg, "", 0, 0, fmt.Errorf("option \"python\" = %v (%T): want an interpreter name or path", v, v)
		}
		python = s
	}
	if v, ok := opts["module_env"]; ok {
		s, ok := v.(string)
		if !ok || !strings.Contains(s, ":") {
			return cfg, "", 0, 0, fmt.Errorf("option \"module_env\" = %v (%T): want \"package.module:ClassName\"", v, v)
		}
		cfg.ModuleEnv = s
	}
	if cfg.Import, err = gymImports(opts); err != nil {
		return cfg, "", 0, 0, err
	}
	if cfg.Kwargs, err = table(opts["kwargs"], "option \"kwargs\""); err != nil {
		return cfg, "", 0, 0, err
	}
	if cfg.Wrappers, err = gymWrappers(opts["wrappers"]); err != nil {
		return cfg, "", 0, 0, err
	}
	if _, ok := opts["max_episode_steps"]; ok {
		limit, err := opts.Int("max_episode_steps", 0)
		if err == nil && limit < 0 {
			err = fmt.Errorf("option \"max_episode_steps\" = %d: want >= 0 (0 removes the limit)", limit)
		}
		if err != nil {
			return cfg, "", 0, 0, err
		}
		cfg.MaxEpisodeSteps = &limit
	}
	if cfg.ChannelsFirst, err = opts.Bool("channels_first", false); err != nil {
		return cfg, "", 0, 0, err
	}
	if timeout, err = seconds(opts, "timeout", 30); err == nil {
		start, err = seconds(opts, "start_timeout", 120)
	}
	return cfg, python, timeout, start, err
}

// pyName matches a dotted Python name.
var pyName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// gymImports reads the option "import": module names, each optionally
// followed by ":function", a function of the module to call after the
// import.
func gymImports(opts Options) ([]string, error) {
	list, err := stringList(opts, "import", "module name")
	if err != nil {
		return nil, err
	}
	for i, m := range list {
		mod, fn, call := strings.Cut(m, ":")
		if !pyName.MatchString(mod) || call && !pyName.MatchString(fn) {
			return nil, fmt.Errorf("option \"import\"[%d] = %q: want \"package.module\", or \"package.module:function\" to call function() after importing it", i, m)
		}
	}
	return list, nil
}

// seconds reads a positive number of seconds under key.
func seconds(opts Options, key string, def float64) (time.Duration, error) {
	secs, err := opts.Float(key, def)
	if err != nil {
		return 0, err
	}
	if secs <= 0 {
		return 0, fmt.Errorf("option %q = %v: want a positive number of seconds", key, secs)
	}
	return time.Duration(secs * float64(time.Second)), nil
}

// stringList reads the list of strings under key (absent: nil).
func stringList(opts Options, key, what string) ([]string, error) {
	switch v := opts[key].(type) {
	case nil:
		return nil, nil
	case []string:
		return v, nil
	case []any:
		out := make([]string, len(v))
		for i, m := range v {
			s, ok := m.(string)
			if !ok {
				return nil, fmt.Errorf("option %q: %v (%T) is not a %s", key, m, m, what)
			}
			out[i] = s
		}
		return out, nil
	default:
		return nil, fmt.Errorf("option %q = %v (%T): want a list of %ss", key, v, v, what)
	}
}

// table reads a table of keyword arguments (absent: nil).
func table(v any, what string) (map[string]any, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return v, nil
	case Options:
		return v, nil
	}
	return nil, fmt.Errorf("%s = %v (%T): want a table of keyword arguments", what, v, v)
}

// gymWrappers reads the "wrappers" option: names, or tables with a name
// and keyword arguments.
func gymWrappers(v any) ([]gymWrapper, error) {
	if v == nil {
		return nil, nil
	}
	var list []any
	switch v := v.(type) {
	case []any:
		list = v
	case []string:
		for _, s := range v {
			list = append(list, s)
		}
	case []map[string]any: // TOML's array of tables
		for _, m := range v {
			list = append(list, m)
		}
	default:
		return nil, fmt.Errorf("option \"wrappers\" = %v (%T): want a list of wrapper names or {name, kwargs} tables", v, v)
	}
	out := make([]gymWrapper, len(list))
	for i, w := range list {
		at := fmt.Sprintf("option \"wrappers\"[%d]", i)
		switch w := w.(type) {
		case string:
			out[i].Name = w
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(w)) {
				if k != "name" && k != "kwargs" {
					return nil, fmt.Errorf("%s: unknown key %q (want name, kwargs)", at, k)
				}
			}
			out[i].Name, _ = w["name"].(string)
			var err error
			if out[i].Kwargs, err = table(w["kwargs"], at+".kwargs"); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%s = %v (%T): want a wrapper name or a {name, kwargs} table", at, w, w)
		}
		if n := out[i].Name; n == "" || strings.ContainsAny(n, " /\\") || !strings.ContainsAny(n, ".:") {
			return nil, fmt.Errorf("%s: name %q: want \"package.module.Class\"", at, n)
		}
	}
	return out, nil
}
