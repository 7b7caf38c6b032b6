package cli

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/evolverl/evolve/evo"
)

// errBadInput marks a command-line error as bad input (exit 2) without
// words of its own: wrapped after the message, it adds none.
var errBadInput = quietErr{evo.ErrBadInput}

type quietErr struct{ error }

func (quietErr) Error() string   { return "" }
func (e quietErr) Unwrap() error { return e.error }

// setFlags are the -set KEY=VALUE overrides, in order.
type setFlags []string

func (s *setFlags) String() string { return strings.Join(*s, " ") }

// Set implements flag.Value: KEY=VALUE, KEY a config key with its tables
// ("ppo.lr", "population.size", "env.options.max_episode_steps").
func (s *setFlags) Set(v string) error {
	key, _, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(key) == "" {
		return errors.New("want KEY=VALUE, e.g. ppo.lr=1e-3")
	}
	*s = append(*s, v)
	return nil
}

// flags returns the overrides as they were given, for messages.
func (s setFlags) flags() []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = "-set " + v
	}
	return out
}

// applySets returns the config text with every override applied, each
// checked on its own first (an unknown key gets its did-you-mean, a value
// of the wrong type names the key). A VALUE is read as a TOML value (1e-3,
// 8, true, [64, 64], "x", inf); one that is not is taken as a string, so
// env.id=Acrobot-v1 needs no quotes. With an error it also returns the text
// with the good overrides applied and those overrides (none: nil text), so
// that their values can be checked in the same run.
func applySets(text []byte, sets setFlags) ([]byte, setFlags, error) {
	if len(sets) == 0 {
		return text, nil, nil
	}
	var doc map[string]any
	if _, err := toml.NewDecoder(bytes.NewReader(text)).Decode(&doc); err != nil {
		return nil, nil, err
	}
	// Every -set is checked, so that the message lists each bad one as a
	// config file's would; none is applied unless all are good.
	var bad []error
	var good setFlags
	for _, s := range sets {
		key, raw, _ := strings.Cut(s, "=")
		path := strings.Split(strings.TrimSpace(key), ".")
		v := tomlValue(strings.TrimSpace(raw))
		if err := checkSet(path, v); err != nil {
			bad = append(bad, fmt.Errorf("-set %s: %w", s, err))
			continue
		}
		if err := setPath(doc, path, v); err != nil {
			bad = append(bad, fmt.Errorf("-set %s: %w", s, err))
			continue
		}
		good = append(good, s)
	}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(doc); err != nil {
		return nil, nil, fmt.Errorf("-set: %w", err)
	}
	if len(bad) > 0 {
		err := fmt.Errorf("%w%w", errors.Join(bad...), errBadInput)
		if len(good) == 0 {
			return nil, nil, err
		}
		return b.Bytes(), good, err
	}
	return b.Bytes(), sets, nil
}

// tomlValue reads raw as a TOML value, or as a string when it is not one.
// A whole number written as a float (1e6) becomes an integer, which TOML
// also lets a float key take, so that -set population.max_steps=1e6 works.
func tomlValue(raw string) any {
	var v struct{ V any }
	if _, err := toml.Decode("V = "+raw, &v); err != nil {
		return raw
	}
	if f, ok := v.V.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int64(f)
	}
	return v.V
}

// checkSet checks the one key and its value's type alone (evo.CheckKeys),
// so that evo says what is wrong with it as it would in a file and names no
// line of a file; the rules between keys are checked on the merged config.
func checkSet(path []string, v any) error {
	doc := map[string]any{}
	if err := setPath(doc, path, v); err != nil {
		return err
	}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(doc); err != nil {
		return err
	}
	if err := evo.CheckKeys(b.Bytes()); err != nil {
		// Line numbers refer to the snippet, not to anything the user wrote.
		msg := snippetLine.ReplaceAllString(err.Error(), "")
		msg = snippetLineNote.ReplaceAllString(msg, "${1}")
		// A value where a table belongs (-set hp.lr=1e-3): name the keys.
		msg = tableMismatch.ReplaceAllString(msg, "${1} is a table, not a value: set its keys (-set ${1}.KEY=VALUE)")
		return errors.New(msg)
	}
	return nil
}

// setPath sets doc's nested key path to v, making the tables on the way.
func setPath(doc map[string]any, path []string, v any) error {
	for i, k := range path[:len(path)-1] {
		next, ok := doc[k]
		if !ok {
			next = map[string]any{}
			doc[k] = next
		}
		m, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("%s is a value, not a table", strings.Join(path[:i+1], "."))
		}
		doc = m
	}
	doc[path[len(path)-1]] = v
	return nil
}

// tableMismatch matches evo's words for a value given where a table
// belongs ("hp.lr: want a table (got float)"), with the key.
var tableMismatch = regexp.MustCompile(`^([\w.]+): want a table \(got \w+\)`)

// snippetLine matches the "line N: " evo puts before a key's type error.
var snippetLine = regexp.MustCompile(`^line \d+: `)

// snippetLineNote matches a line note within a message, " (line 3)" or
// "(line 3, " (the snippet of a key deep in tables spans several lines).
var snippetLineNote = regexp.MustCompile(` \(line \d+\)|(\()line \d+, `)

// removeHint says how to remove the [pbt] table that err, the error of the
// config src with the overrides s, asks to remove (selection set away from
// "pbt" on a config that has the table), which -set cannot do; "" for any
// other error, or where the table came from an override (dropping that
// -set is the way).
func (s setFlags) removeHint(src configSource, err error) string {
	if len(s) == 0 || !strings.Contains(err.Error(), "[pbt] given, but") {
		return ""
	}
	for _, v := range s {
		if strings.HasPrefix(strings.TrimSpace(v), "pbt.") {
			return ""
		}
	}
	how := "write the config out, remove the table there and train that file with -config"
	if name, ok := strings.CutPrefix(src.name, "shipped config "); ok {
		how = fmt.Sprintf("evolve configs %s > my.toml, remove the table there and train -config my.toml", name)
	}
	return " (-set cannot remove a table: " + how + ")"
}
