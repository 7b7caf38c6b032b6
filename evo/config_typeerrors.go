package evo

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// maxTypeErrors bounds how many values of the wrong type one decode names.
const maxTypeErrors = 20

// typeErrors returns the decode error first of the config data (see
// decodeError) joined with those of every other value of the wrong type:
// the TOML decoder stops at the first, so a file with three such values
// took three runs to fix. The data is decoded into plain TOML values, and
// decoded onto a config again without each key named so far, until it
// decodes (then its unknown keys are named too) or the error is another
// kind (named as the decoder says it, and the last); every error gets its
// key's line in data. A first error that is not a type error is returned
// alone.
func typeErrors(data []byte, first error) error {
	key, firstLine, ok := mismatchKey(first)
	if !ok {
		return decodeError(first)
	}
	var plain map[string]any
	if _, err := toml.Decode(string(data), &plain); err != nil {
		return decodeError(first)
	}
	type found struct {
		line int // in data; 0 when it cannot be told
		msg  string
	}
	n, _ := strconv.Atoi(firstLine)
	all := []found{{n, decodeError(first).Error()}}
	for len(all) < maxTypeErrors && deleteKey(plain, key) {
		var buf bytes.Buffer
		if err := toml.NewEncoder(&buf).Encode(plain); err != nil {
			break
		}
		cfg := DefaultConfig()
		md, err := toml.NewDecoder(&buf).Decode(&cfg)
		if err == nil {
			// The unknown keys too: all that can be named before values.
			if err := checkKeys(md, data); err != nil {
				all = append(all, found{math.MaxInt, err.Error()})
			}
			break
		}
		var line string
		if key, line, ok = mismatchKey(err); !ok {
			// Another kind (a value its type's own decoding refuses): named
			// as the decoder says it, but for the copy's line, and the
			// search ends.
			all = append(all, found{math.MaxInt, copyLine.ReplaceAllString(err.Error(), "$1: ")})
			break
		}
		// The line in the encoded copy is not the file's.
		msg := strings.TrimPrefix(decodeError(err).Error(), "line "+line+": ")
		n := keyLine(data, toml.Key(strings.Split(key, ".")))
		if n > 0 {
			msg = fmt.Sprintf("line %d: %s", n, msg)
		}
		all = append(all, found{n, msg})
	}
	// In the file's order, those without a line last.
	slices.SortStableFunc(all, func(a, b found) int {
		return cmp.Compare(cmp.Or(a.line, math.MaxInt), cmp.Or(b.line, math.MaxInt))
	})
	errs := make([]error, len(all))
	for i, f := range all {
		errs[i] = errors.New(f.msg)
	}
	return errors.Join(errs...)
}

// copyLine matches the line and key of a decoder's error about the encoded
// copy, whose line is not the file's.
var copyLine = regexp.MustCompile(`^toml: line \d+ \(last key "(.*?)"\): `)

// mismatchKey returns the key and line of a decoder's error about a value
// of the wrong type, and false for any other error.
func mismatchKey(err error) (key, line string, ok bool) {
	if err == nil {
		return "", "", false
	}
	for _, re := range []*regexp.Regexp{typeMismatch, tableMismatch} {
		if m := re.FindStringSubmatch(err.Error()); m != nil {
			return m[2], m[1], true
		}
	}
	return "", "", false
}

// deleteKey removes the dotted key from the plain TOML tables t, and
// reports whether it was there. A key part quoted for a dot it holds is
// not found, and the search ends with its error.
func deleteKey(t map[string]any, key string) bool {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := t[p].(map[string]any)
		if !ok {
			return false
		}
		t = next
	}
	last := parts[len(parts)-1]
	if _, ok := t[last]; !ok {
		return false
	}
	delete(t, last)
	return true
}
