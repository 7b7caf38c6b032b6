package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/evolverl/evolve/configs"
	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/evo"
)

// docCommand is an evolve command line found in the documentation.
type docCommand struct {
	where string   // file:line
	args  []string // after "evolve"
}

// docCommands returns every evolve command in the code blocks (fenced or
// indented) of the Markdown file path: lines that start, after an
// optional "$ ", with "evolve " or "go run ./cmd/evolve ", continued over
// lines ending in "\", without a trailing "# comment".
func docCommands(t *testing.T, path string) []docCommand {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []docCommand
	fenced, pending, start := false, "", 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced && !strings.HasPrefix(line, "    ") && pending == "" {
			continue
		}
		text := strings.TrimPrefix(strings.TrimSpace(line), "$ ")
		if pending == "" {
			rest, ok := strings.CutPrefix(text, "go run ./cmd/evolve ")
			if !ok {
				rest, ok = strings.CutPrefix(text, "evolve ")
			}
			if !ok {
				continue
			}
			text, start = rest, n
		}
		if s, more := strings.CutSuffix(text, "\\"); more {
			pending += s + " "
			continue
		}
		full := pending + text
		pending = ""
		if i := regexp.MustCompile(`\s#\s`).FindStringIndex(full); i != nil {
			full = full[:i[0]]
		}
		out = append(out, docCommand{fmt.Sprintf("%s:%d", path, start), strings.Fields(full)})
	}
	return out
}

// docFlags returns the flags the subcommand sub ("" for training) takes,
// read from its -h.
func docFlags(t *testing.T, sub string) map[string]bool {
	t.Helper()
	args := []string{"-h"}
	if sub != "" {
		args = []string{sub, "-h"}
	}
	code, _, stderr := evolve(context.Background(), args...)
	if code != exitOK {
		t.Fatalf("evolve %v: exit %d", args, code)
	}
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllStringSubmatch(stderr, -1) {
		flags[m[1]] = true
	}
	return flags
}

// TestDocumentedCommandsAreValid holds every evolve command written in
// the README and docs/ to the command as it is: the subcommand exists,
// every flag is one it takes, and the configs, shipped config names and
// env ids it names load and validate. (Commands are not run: many train
// for hours, and name run directories a reader makes first.)
func TestDocumentedCommandsAreValid(t *testing.T) {
	paths := []string{filepath.Join("..", "README.md")}
	more, _ := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	paths = append(paths, more...)
	problems, checked := docProblems(t, paths)
	for _, p := range problems {
		t.Error(p)
	}
	if checked < 10 {
		t.Errorf("found only %d commands in %v: is the extraction broken?", checked, paths)
	}
}

// TestDocCheckFindsStaleCommands: the check itself sees a flag that does
// not exist, a missing config and an unknown env, in both kinds of code
// block, across a continued line.
func TestDocCheckFindsStaleCommands(t *testing.T) {
	md := filepath.Join(t.TempDir(), "doc.md")
	text := "Text.\n\n    $ evolve -config configs/cartpole.toml -bogus 3   # a comment\n\n" +
		"```sh\ngo run ./cmd/evolve plot -o x \\\n    -nope runs/x\nevolve -config configs/none.toml\nevolve -env Nope-v9\n" +
		"evolve -config configs/cartpole.toml -max-steps 1e6   # fine\n```\n"
	if err := os.WriteFile(md, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	problems, checked := docProblems(t, []string{md})
	joined := strings.Join(problems, "\n")
	if checked != 5 || len(problems) != 4 || !strings.Contains(joined, "no flag -bogus") || !strings.Contains(joined, "no flag -nope") ||
		!strings.Contains(joined, "configs/none.toml") || !strings.Contains(joined, "Nope-v9") {
		t.Errorf("%d commands, problems:\n%s", checked, joined)
	}
}

// docProblems checks the commands of the Markdown files and returns what
// is wrong and how many commands it checked.
func docProblems(t *testing.T, paths []string) (problems []string, checked int) {
	t.Helper()
	flagsOf := map[string]map[string]bool{}
	for _, p := range paths {
		for _, c := range docCommands(t, p) {
			sub, args := "", c.args
			if len(args) > 0 && subcommands[args[0]] != nil {
				sub, args = args[0], args[1:]
			}
			if flagsOf[sub] == nil {
				flagsOf[sub] = docFlags(t, sub)
			}
			for i, a := range args {
				name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
				if strings.HasPrefix(a, "-") && !flagsOf[sub][name] {
					problems = append(problems, fmt.Sprintf("%s: evolve %s: no flag %s", c.where, strings.Join(c.args, " "), a))
				}
				if i+1 < len(args) {
					problems = append(problems, checkDocArg(c, a, args[i+1])...)
				}
			}
			checked++
		}
	}
	return problems, checked
}

// checkDocArg checks the value of flag (or, for bench, of a config
// argument) where a reader can: config files and names, env ids.
func checkDocArg(c docCommand, flag, value string) []string {
	var problems []string
	switch flag {
	case "-config":
		if _, err := os.Stat(filepath.Join("..", value)); err == nil {
			if _, err := evo.LoadConfig(filepath.Join("..", value)); err != nil {
				problems = append(problems, fmt.Sprintf("%s: -config %s: %v", c.where, value, err))
			}
		} else if _, err := configs.Read(value); err != nil {
			problems = append(problems, fmt.Sprintf("%s: -config %s: neither a file of the repository nor a shipped config", c.where, value))
		}
	case "-env":
		if _, ok := envs.Lookup(value); !ok && !strings.HasPrefix(value, envs.GymPrefix) {
			problems = append(problems, fmt.Sprintf("%s: -env %s: no such env", c.where, value))
		}
	}
	if strings.HasSuffix(value, ".toml") && strings.HasPrefix(value, "configs/") && flag != "-config" {
		if _, err := evo.LoadConfig(filepath.Join("..", value)); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %s: %v", c.where, value, err))
		}
	}
	return problems
}

// TestDocumentLinksResolve: every relative link and image in README.md
// and docs/*.md names a file of the repository.
func TestDocumentLinksResolve(t *testing.T) {
	paths := []string{filepath.Join("..", "README.md")}
	more, _ := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	paths = append(paths, more...)
	sub, _ := filepath.Glob(filepath.Join("..", "docs", "bench", "*", "README.md"))
	paths = append(paths, sub...)
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || regexp.MustCompile(`^[a-z]+:`).MatchString(target) {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(p), target)); err != nil {
				t.Errorf("%s: link %s: %v", p, m[1], err)
			}
		}
	}
}
