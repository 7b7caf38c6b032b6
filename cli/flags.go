package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// command is a subcommand's flag set and the one way every subcommand
// reports how it was misused: a line saying what is wrong, then where the
// flags are described. Only -h (and a bare evolve) print the whole usage.
type command struct {
	name     string // as the user typed it: "evolve", "evolve play"
	synopsis string // the usage lines -h prints before the flags
	fs       *flag.FlagSet
	stderr   io.Writer
}

// newCommand returns the command name with an empty flag set whose own
// messages are silenced: parse and misuse speak for it.
func newCommand(name, synopsis string, stderr io.Writer) *command {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &command{name: name, synopsis: synopsis, fs: fs, stderr: stderr}
}

// usage prints the synopsis and every flag with its default, with the
// program's own name for evolve (a program of its own built on Main).
func (c *command) usage() {
	synopsis := c.synopsis
	if programName != "evolve" {
		synopsis = synopsisProgram.ReplaceAllStringFunc(synopsis, func(m string) string {
			return strings.TrimSuffix(m, "evolve") + programName
		})
		// A command's continued lines stay under its flags.
		shift := len(programName) - len("evolve")
		synopsis = synopsisContinued.ReplaceAllStringFunc(synopsis, func(m string) string {
			return strings.Repeat(" ", max(len("usage: "), len(m)-1+shift)) + "["
		})
	}
	fmt.Fprint(c.stderr, synopsis)
	c.fs.SetOutput(c.stderr)
	c.fs.PrintDefaults()
	c.fs.SetOutput(io.Discard)
}

// parse parses args. ok is false when the command must return status at
// once: after -h (the usage, 0) or a flag that does not parse (one line
// naming it, 2).
func (c *command) parse(args []string) (status int, ok bool) {
	err := c.fs.Parse(args)
	switch {
	case err == nil:
		return exitOK, true
	case errors.Is(err, flag.ErrHelp):
		c.usage()
		return exitOK, false
	}
	return c.misuse("%s", c.explain(err)), false
}

// explain rewrites the flag package's "invalid value "x" for flag -n:
// parse error" to say what the flag wants.
func (c *command) explain(err error) string {
	msg := err.Error()
	m := invalidValue.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	want := ""
	if f := c.fs.Lookup(m[2]); f != nil {
		switch fmt.Sprintf("%T", f.Value) {
		case "*flag.intValue", "*flag.int64Value", "*flag.uintValue", "*flag.uint64Value":
			want = "an integer"
		case "*flag.float64Value":
			want = "a number"
		case "*flag.durationValue":
			want = "a duration such as 30s or 2m"
		case "*flag.boolValue":
			want = "true or false"
		}
	}
	if want == "" || !strings.HasSuffix(msg, "parse error") {
		return msg
	}
	return fmt.Sprintf("-%s %q: want %s", m[2], m[1], want)
}

// invalidValue matches the flag package's message for a value that does
// not parse.
var invalidValue = regexp.MustCompile(`^invalid value "(.*)" for flag -([\w-]+): `)

// parseInterspersed parses args whose flags may come before, between or
// after the positional arguments, which it returns in order.
func (c *command) parseInterspersed(args []string) (pos []string, status int, ok bool) {
	for {
		if status, ok := c.parse(args); !ok {
			return nil, status, false
		}
		if c.fs.NArg() == 0 {
			return pos, exitOK, true
		}
		pos = append(pos, c.fs.Arg(0))
		args = c.fs.Args()[1:]
	}
}

// synopsisProgram matches the program's name where a synopsis line runs
// it, and synopsisContinued the indent of a line that continues a command's
// flags (deeper than "usage: ").
var (
	synopsisProgram   = regexp.MustCompile(`(?m)^(usage: | +)evolve\b`)
	synopsisContinued = regexp.MustCompile(`(?m)^( {8,})\[`)
)

// misuse reports a bad flag, a bad value or flags that do not go together:
// "NAME: message" and a pointer to -h. It returns 2.
func (c *command) misuse(format string, a ...any) int {
	fmt.Fprintf(c.stderr, c.name+": "+format+"\n", a...)
	// The program to run is this one, which may have another name than
	// evolve (a program of its own built on Main).
	own := programName + strings.TrimPrefix(c.name, "evolve")
	fmt.Fprintf(c.stderr, "%s: run %s -h for the flags\n", c.name, own)
	return exitBadInput
}

// set returns the names of the flags given on the command line.
func (c *command) set() map[string]bool {
	set := map[string]bool{}
	c.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// stepsValue is a flag.Value for a count of env steps, written as a Go
// integer literal with digit separators (1_000_000) or in scientific
// notation (1e6, 2.5e5) as long as the value is a whole number.
type stepsValue int

func (v *stepsValue) String() string { return strconv.Itoa(int(*v)) }

// Set implements flag.Value.
func (v *stepsValue) Set(s string) error {
	if strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") || strings.Contains(s, "__") {
		return fmt.Errorf("want a whole number of steps, e.g. 1000000, 1_000_000 or 1e6")
	}
	digits := strings.ReplaceAll(s, "_", "")
	if n, err := strconv.ParseInt(digits, 10, 64); err == nil {
		*v = stepsValue(n)
		return nil
	}
	f, err := strconv.ParseFloat(digits, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 || strings.ContainsAny(digits, "xXpP") {
		return fmt.Errorf("want a whole number of steps, e.g. 1000000, 1_000_000 or 1e6")
	}
	*v = stepsValue(f)
	return nil
}
