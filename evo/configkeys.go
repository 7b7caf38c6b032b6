package evo

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/evolverl/evolve/internal/nearest"
	"github.com/evolverl/evolve/netconf"
)

// keyNotes returns what helps find and fix the unknown key k of the config
// data: " (line N, did you mean NAME?)", either part when it is known, or
// "". See keyLine and didYouMean.
func keyNotes(data []byte, k toml.Key) string {
	var notes []string
	if line := keyLine(data, k); line > 0 {
		notes = append(notes, fmt.Sprintf("line %d", line))
	}
	if name := didYouMean(k); name != "" {
		notes = append(notes, "did you mean "+name+"?")
	}
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, ", ") + ")"
}

// leadingKey matches a config key (or a [table]) at the start of an error
// message: "pbt.quantile = 0.7: ...", "hp.lr: ...", "[pbt] given, ...".
var leadingKey = regexp.MustCompile(`^\[?([a-z_][a-z0-9_]*(?:\.[a-z0-9_]+)+|[a-z_][a-z0-9_]*)\]?[ :=]`)

// withKeyLines returns err, the config data's validation errors (joined),
// with " (line N)" after each one that begins with a key the data defines
// on line N, so that a value out of range is found in the file as an
// unknown key is. Keys at their defaults (not in the file) get no line.
func withKeyLines(data []byte, err error) error {
	if err == nil {
		return nil
	}
	var out []error
	var add func(e error)
	add = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, inner := range j.Unwrap() {
				if inner != ErrBadInput { // inputError's mark, not a message: the caller marks the whole
					add(inner)
				}
			}
			return
		}
		if m := leadingKey.FindStringSubmatch(e.Error()); m != nil {
			if line := keyLine(data, toml.Key(strings.Split(m[1], "."))); line > 0 {
				e = lineNoted{e, line}
			}
		}
		out = append(out, e)
	}
	add(err)
	return errors.Join(out...)
}

// lineNoted is a config error with the line of its key, noted at the end
// of the error's first line: what follows (a Python traceback) is not the
// config's.
type lineNoted struct {
	err  error
	line int
}

func (e lineNoted) Error() string {
	first, rest, more := strings.Cut(e.err.Error(), "\n")
	if more {
		rest = "\n" + rest
	}
	return fmt.Sprintf("%s (line %d)%s", first, e.line, rest)
}

func (e lineNoted) Unwrap() error { return e.err }

// didYouMean returns the key of the same table as the unknown config key k
// that is at most 2 edits from k's last part (the closest, the first in
// the struct's order on a tie), or "".
func didYouMean(k toml.Key) string {
	if len(k) == 0 {
		return ""
	}
	return nearest.Name(k[len(k)-1], tableKeys(reflect.TypeFor[Config](), k[:len(k)-1]), 2)
}

// keyProbe fails to decode whatever it is given, so that the decoder's
// error tells where the key decoded into it is (see keyLine).
type keyProbe struct{}

var errKeyProbe = errors.New("key probe")

// UnmarshalTOML implements toml.Unmarshaler.
func (keyProbe) UnmarshalTOML(any) error { return errKeyProbe }

// keyLine returns the line of the config data on which key k is defined,
// or 0 if that cannot be told. The decoder's metadata keeps key positions
// but does not export them; its errors carry them, so data is decoded again
// into a struct made for k alone, with a keyProbe at k.
func keyLine(data []byte, k toml.Key) int {
	t := reflect.TypeFor[keyProbe]()
	for i := len(k) - 1; i >= 0; i-- {
		if k[i] == "" || strings.ContainsAny(k[i], "\"\\`,") {
			return 0 // not expressible as a struct tag
		}
		t = reflect.StructOf([]reflect.StructField{{Name: "XEvolveKeyProbe", Type: t, Tag: reflect.StructTag(`toml:"` + k[i] + `"`)}})
	}
	var pe toml.ParseError
	_, err := toml.NewDecoder(bytes.NewReader(data)).Decode(reflect.New(t).Interface())
	if errors.As(err, &pe) && pe.Message == errKeyProbe.Error() && pe.LastKey == k.String() {
		return pe.Position.Line
	}
	return 0
}

// tableKeys returns the keys the table at path holds when decoded into a
// value of type t: the toml names of its struct's fields, those of
// embedded structs included. It returns nil when path leads to no struct.
func tableKeys(t reflect.Type, path []string) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	if t.Kind() == reflect.Map {
		if len(path) == 0 {
			return nil
		}
		return tableKeys(t.Elem(), path[1:])
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous && f.Tag.Get("toml") == "" {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		if len(path) > 0 && name == path[0] {
			return tableKeys(f.Type, path[1:])
		}
		names = append(names, name)
	}
	if len(path) > 0 {
		return nil
	}
	if t == reflect.TypeFor[netconf.Spec]() {
		names = append(names, "backend") // net.backend is read apart from the spec
	}
	return names
}

// CheckKeys checks the keys of a config fragment and the types of their
// values, as DecodeConfig would (an unknown key with its did-you-mean, a
// value of the wrong type naming the key), but none of the rules between
// keys, which need the whole config: a tool that merges a fragment into a
// config checks the fragment with it, then the merged config with
// DecodeConfig or ParseConfig.
func CheckKeys(fragment []byte) error {
	cfg := DefaultConfig()
	md, err := toml.NewDecoder(bytes.NewReader(fragment)).Decode(&cfg)
	if err != nil {
		return badInput(typeErrors(fragment, err))
	}
	if err := checkKeys(md, fragment); err != nil {
		return badInput(err)
	}
	return nil
}

// The TOML decoder's words for a value of the wrong type, and for a value
// where a table belongs, with the line and the key.
var (
	typeMismatch  = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]+)"\): incompatible types: TOML value has type ([\w.\[\]]+); destination has type ([\w.\[\]]+)$`)
	tableMismatch = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]+)"\): type mismatch for [\w.*\[\]]+: expected table but found ([\w\[\]]+)$`)
)

// decodeError says a type error of the TOML decoder in TOML's words ("line
// 2: population.size: want integer (got string)") instead of Go's; other
// errors (syntax, with their line and column) are returned as they are.
func decodeError(err error) error {
	msg := err.Error()
	if m := typeMismatch.FindStringSubmatch(msg); m != nil {
		if tomlType(m[3]) == "table" {
			return fmt.Errorf("line %s: %s: a value, not a table: no keys go under it", m[1], m[2])
		}
		return fmt.Errorf("line %s: %s: want %s (got %s)", m[1], m[2], tomlType(m[4]), tomlType(m[3]))
	}
	if m := tableMismatch.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("line %s: %s: want a table (got %s)", m[1], m[2], tomlType(m[3]))
	}
	return err
}

// tomlType names a Go type of the TOML decoder's messages as TOML does.
func tomlType(goType string) string {
	switch {
	case strings.HasPrefix(goType, "int") || strings.HasPrefix(goType, "uint"):
		return "integer"
	case strings.HasPrefix(goType, "float"):
		return "float"
	case goType == "bool":
		return "boolean"
	case goType == "time.Time":
		return "datetime"
	case goType == "slice" || strings.HasPrefix(goType, "[]"):
		return "array"
	case strings.HasPrefix(goType, "map") || goType == "struct":
		return "table"
	}
	return goType
}
