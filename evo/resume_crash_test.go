package evo

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evolverl/evolve/internal/runtest"
	"github.com/evolverl/evolve/internal/simd"
)

// TestResumeRestartsARunStoppedBeforeItsFirstCheckpoint: a SIGKILL while
// gen-000000 was written leaves config.toml and a checkpoints directory of
// temporaries only. Resume starts such a run again from config.toml (New
// refused the directory, and resume had nothing to read), and it ends as
// the run never stopped.
func TestResumeRestartsARunStoppedBeforeItsFirstCheckpoint(t *testing.T) {
	straight := uninterrupted(t, 0)
	killed := tiny(t)
	b, err := killed.TOML()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(killed.OutDir, "checkpoints")
	half := filepath.Join(root, ".tmp-gen-000000-123")
	if err := os.MkdirAll(half, 0o755); err != nil {
		t.Fatal(err)
	}
	for path, data := range map[string][]byte{
		filepath.Join(killed.OutDir, "config.toml"):     b,
		filepath.Join(half, "agent-000000.safetensors"): []byte("cut sh"),
		filepath.Join(root, ".latest.tmp-42"):           nil,
	} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := New(killed, Options{}); err == nil || !strings.Contains(err.Error(), "already holds a run") {
		t.Fatalf("New on the directory: %v; want it refused (resume it)", err)
	}
	resumeToTheEnd(t, killed.OutDir, "of a run stopped before its first checkpoint")
	runtest.SameRun(t, straight.OutDir, killed.OutDir)
	if entries, _ := os.ReadDir(root); len(entries) == 0 || strings.HasPrefix(entries[0].Name(), ".") {
		t.Errorf("checkpoints after the restart: %v", entries)
	}
}

// TestResumeOfAFinishedRunRewritesAStaleSummary: summary.json left by a
// stop before a run's end (an interrupted session, then a SIGKILL after the
// final checkpoint), or not written at all, is rewritten when the finished
// run is resumed, which trains nothing.
func TestResumeOfAFinishedRunRewritesAStaleSummary(t *testing.T) {
	cfg := tiny(t)
	want, err := run(t, cfg, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(cfg.OutDir, "summary.json")
	for _, damage := range []func() error{
		func() error {
			return os.WriteFile(path, []byte(`{"generations": 1, "stop_reason": "interrupted", "finished": false, "elite_index": 1}`), 0o644)
		},
		func() error { return os.Remove(path) },
	} {
		if err := damage(); err != nil {
			t.Fatal(err)
		}
		tr, err := Resume(cfg.OutDir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		got, err := ReadSummary(cfg.OutDir)
		if err != nil || !got.Finished || got.Generations != want.Generations || got.StopReason != want.StopReason ||
			got.EliteIndex != want.EliteIndex || got.EliteFitness != want.EliteFitness {
			t.Errorf("summary.json after resuming the finished run: %+v, %v; want %+v", got, err, want)
		}
	}
	// An up-to-date summary is left as it is (its session's steps/s).
	before := runtest.ReadFile(t, path)
	tr, err := Resume(cfg.OutDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if after := runtest.ReadFile(t, path); string(after) != string(before) {
		t.Errorf("an up-to-date summary.json was rewritten:\n%s\nthen\n%s", before, after)
	}
}

// TestExtensionKeepsItsBudgetAfterAStop: the new stopping rules reach
// config.toml before the first checkpoint after them is named latest, so
// that a stop between the two cannot leave that checkpoint to be resumed
// under the old budget (a plain -resume then stopped at a budget neither
// rule gives).
func TestExtensionKeepsItsBudgetAfterAStop(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("trains a population twice")
	}
	const budget = 4 * 3 * 256
	cfg := tiny(t)
	cfg.Population.MaxSteps = budget / 3
	if _, err := run(t, cfg, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	tr := resumeTo(t, cfg.OutDir, budget)
	// Watch config.toml at the moment latest is switched: the hook runs in
	// writeCheckpoint just before latest is written.
	var seen []int
	tr.beforeLatest = func() {
		c, err := LoadConfig(filepath.Join(cfg.OutDir, "config.toml"))
		if err != nil {
			t.Error(err)
			return
		}
		seen = append(seen, c.Population.MaxSteps)
	}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(seen) == 0 || seen[0] != budget {
		t.Errorf("config.toml's max_steps when the extension's checkpoints were named latest: %v; want %d from the first", seen, budget)
	}
}

// TestCheckpointsClearWhatAStopLeft: the temporary file of latest that a
// stop while it was written leaves behind goes with the next checkpoint, as
// a half-written checkpoint's directory does.
func TestCheckpointsClearWhatAStopLeft(t *testing.T) {
	cfg := tiny(t)
	cfg.Population.MaxSteps = 4 * 256
	if _, err := run(t, cfg, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(cfg.OutDir, "checkpoints")
	for _, name := range []string{".latest.tmp-12345", ".tmp-gen-000009-678"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte("gen-0000"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := Resume(cfg.OutDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.SetStopRules(2*cfg.Population.MaxSteps, cfg.Population.Target); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("%s is left in checkpoints/", e.Name())
		}
	}
}

// TestResumeOnOtherKernelsWarns: a checkpoint records the numeric kernels
// of the machine that wrote it; resumed where they differ (which round
// differently), the run goes on and the log says it will not be bit for bit
// the run that was never stopped.
func TestResumeOnOtherKernelsWarns(t *testing.T) {
	cfg := tiny(t)
	cfg.Population.MaxSteps = 4 * 256
	if _, err := run(t, cfg, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(cfg.OutDir, "checkpoints")
	name := strings.TrimSpace(string(runtest.ReadFile(t, filepath.Join(root, latestFile))))
	path := filepath.Join(root, name, populationFile)
	b := runtest.ReadFile(t, path)
	here := `"kernels": "` + simd.Kernels() + `"`
	if !strings.Contains(string(b), here) {
		t.Fatalf("%s does not record %s", path, here)
	}
	b = []byte(strings.Replace(string(b), here, `"kernels": "elsewhere"`, 1))
	for p, data := range map[string][]byte{path: b, filepath.Join(root, name, populationSumFile): sumFileLine(b)} {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var log strings.Builder
	tr, err := Resume(cfg.OutDir, Options{Log: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	tr.Close()
	if !strings.Contains(log.String(), "other numeric kernels") || !strings.Contains(log.String(), "checkpoint=elsewhere") {
		t.Errorf("log of the resume: %q; want a warning naming both kernels", log.String())
	}
}

// TestConfigBuiltInGoTrainsAndResumes: a config changed in Go after
// parsing — its network, its [hp] ranges removed — trains the network it
// says (not the one parsed before) and resumes, its config.toml reading
// back the config the run was started with.
func TestConfigBuiltInGoTrainsAndResumes(t *testing.T) {
	cfg := tiny(t)
	cfg.Net.MLP.Hidden = []int{24}
	cfg.Net.Latent.Size = 10
	cfg.HP = nil
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	tr, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, m := range tr.Members() {
		if net := m.Agent.Config().Net; !slices.Equal(net.MLP.Hidden, []int{24}) || net.Latent.Size != 10 {
			t.Fatalf("agent %d trained %s, want the MLP of [24] and latent 10 set in Go", m.Index, net)
		}
	}
	if _, err := tr.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a second Run on the Trainer: %v; want an error", err)
	}
	if len(tr.Config().HP) == 0 {
		t.Error("the run's config has no [hp] ranges: an rl_hp mutation would change nothing")
	}
	again, err := Resume(cfg.OutDir, Options{})
	if err != nil {
		t.Fatalf("resume of a run of a config built in Go: %v", err)
	}
	again.Close()
}

// TestTrainTaskWithoutAnAgent: a task without an agent (a zero Task from a
// worker's caller) is an error, not a nil-pointer panic.
func TestTrainTaskWithoutAnAgent(t *testing.T) {
	if _, err := TrainTask(context.Background(), tiny(t), Task{Index: 3}, nil); err == nil || !strings.Contains(err.Error(), "no agent") {
		t.Errorf("TrainTask of a zero task: %v; want an error", err)
	}
}

// TestResumeLeavesOtherFilesInCheckpoints: a checkpoints directory holding
// files that are not a checkpoint's temporaries (a user's notes, a .git) is
// not taken for a run stopped before its first checkpoint: resume refuses
// it and removes nothing.
func TestResumeLeavesOtherFilesInCheckpoints(t *testing.T) {
	cfg := tiny(t)
	b, err := cfg.TOML()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(cfg.OutDir, "checkpoints")
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for path, data := range map[string][]byte{
		filepath.Join(cfg.OutDir, "config.toml"): b,
		filepath.Join(root, ".notes"):            []byte("keep me"),
	} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Resume(cfg.OutDir, Options{}); !errors.Is(err, ErrBadInput) {
		t.Errorf("resume: %v, want ErrBadInput", err)
	}
	for _, p := range []string{".git", ".notes"} {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestRefusedResumeLeavesTheLock: a resume refused for the run directory's
// contents (a garbled metrics.csv, tb/ a file, .lock a directory) is bad
// input and leaves .lock as it was.
func TestRefusedResumeLeavesTheLock(t *testing.T) {
	done := uninterrupted(t, 0)
	for _, tc := range []struct {
		name  string
		spoil func(dir string) error
		lock  bool // .lock is still a file to compare
	}{
		{"garbled metrics", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "metrics.csv"), []byte("not,a,header\n1,2\n"), 0o644)
		}, true},
		{"tb a file", func(dir string) error {
			if err := os.RemoveAll(filepath.Join(dir, "tb")); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "tb"), []byte("x"), 0o644)
		}, true},
		{"lock a directory", func(dir string) error {
			if err := os.Remove(filepath.Join(dir, ".lock")); err != nil {
				return err
			}
			return os.Mkdir(filepath.Join(dir, ".lock"), 0o755)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			if err := os.CopyFS(dir, os.DirFS(done.OutDir)); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ".lock"), []byte("4242\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := tc.spoil(dir); err != nil {
				t.Fatal(err)
			}
			tr, err := Resume(dir, Options{})
			if err == nil {
				if err = tr.SetStopRules(tr.Config().Population.MaxSteps*2, math.Inf(1)); err == nil {
					_, err = tr.Run(context.Background())
				}
			}
			if !errors.Is(err, ErrBadInput) {
				t.Errorf("resume: %v, want ErrBadInput", err)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, ".lock")); tc.lock && string(b) != "4242\n" {
				t.Errorf(".lock holds %q after the refused resume", b)
			}
		})
	}
}

// TestResumeLeavesAUsersConfigDirectory: a directory with a config.toml the
// user wrote (not one a run wrote) and files of theirs is not a run stopped
// before its first checkpoint: resume refuses it and changes nothing.
func TestResumeLeavesAUsersConfigDirectory(t *testing.T) {
	dir := t.TempDir()
	mine := []byte("# my notes\n[population]\nsize = 2\n")
	for name, data := range map[string][]byte{"config.toml": mine, "notes.txt": []byte("x")} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Resume(dir, Options{}); !errors.Is(err, ErrBadInput) {
		t.Errorf("resume: %v, want ErrBadInput", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "config.toml")); !bytes.Equal(b, mine) {
		t.Errorf("config.toml became %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("the directory holds %v after the refused resume", entries)
	}
}

// TestResumeRefusesARunWithoutItsCheckpoints: a finished run whose
// checkpoints were deleted (to save disk) is not a run stopped before its
// first checkpoint: its elite and metrics say it got further. Resume
// refuses it and leaves every file as it was (it retrained it from scratch).
func TestResumeRefusesARunWithoutItsCheckpoints(t *testing.T) {
	done := uninterrupted(t, 0)
	dir := copyRunDir(t, done.OutDir)
	if err := os.RemoveAll(filepath.Join(dir, "checkpoints")); err != nil {
		t.Fatal(err)
	}
	before := runtest.ReadFile(t, filepath.Join(dir, "metrics.csv"))
	elite := runtest.ReadFile(t, filepath.Join(dir, "elite.safetensors"))
	if _, err := Resume(dir, Options{}); !errors.Is(err, ErrBadInput) {
		t.Errorf("resume: %v, want ErrBadInput", err)
	}
	if !bytes.Equal(runtest.ReadFile(t, filepath.Join(dir, "metrics.csv")), before) ||
		!bytes.Equal(runtest.ReadFile(t, filepath.Join(dir, "elite.safetensors")), elite) {
		t.Error("the refused resume changed metrics.csv or the elite")
	}
	// A directory left with only a run's lock and the temporary of the
	// config.toml it was writing (a kill then) takes a new run, which
	// removes the temporary, and Resume says so (it was refused by both).
	lone := filepath.Join(t.TempDir(), "lone")
	if err := os.MkdirAll(lone, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{".lock": "", ".config.toml.tmp-123": "seed = 7\n[env]\nid = \"Cart"} {
		if err := os.WriteFile(filepath.Join(lone, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := CheckNewOutDir(lone); err != nil {
		t.Errorf("a directory holding only .lock and a config temporary: %v", err)
	}
	if _, err := Resume(lone, Options{}); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "start it again (evolve -config CONFIG -out "+lone) {
		t.Errorf("resume of a run stopped while writing config.toml: %v, want ErrBadInput saying to start it again", err)
	}
	cfg := tiny(t)
	cfg.OutDir = lone
	cfg.Population.MaxSteps = 1
	if _, err := run(t, cfg, Options{}, nil); err != nil {
		t.Fatalf("a new run into it: %v", err)
	}
	if _, err := os.Stat(filepath.Join(lone, ".config.toml.tmp-123")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the new run left the temporary: %v", err)
	}
}

// TestResumeSaysWhatItCannotKeep: a resume whose metrics.csv was removed,
// or whose TensorBoard file of an earlier session has a damaged record,
// says so (it began metrics.csv again, or dropped every event from the
// damage on, without a word), and keeps the events after a damaged record.
func TestResumeSaysWhatItCannotKeep(t *testing.T) {
	done := uninterrupted(t, 0)
	dir := copyRunDir(t, done.OutDir)
	if err := os.Remove(filepath.Join(dir, "metrics.csv")); err != nil {
		t.Fatal(err)
	}
	tb, _ := filepath.Glob(filepath.Join(dir, "tb", "events.out.tfevents.*"))
	if len(tb) != 1 {
		t.Fatalf("event files %v, want 1", tb)
	}
	b := runtest.ReadFile(t, tb[0])
	events := bytes.Count(b, []byte("\x0a\x0ageneration")) // the tag "generation" (field 1, length 10) of every generation
	// A byte of the data of the middle record (a record: an 8-byte length,
	// its 4-byte checksum, the data, the data's checksum).
	var offs []int
	for off := 0; off+12 <= len(b); off += 16 + int(binary.LittleEndian.Uint64(b[off:])) {
		offs = append(offs, off)
	}
	b[offs[len(offs)/2]+14] ^= 0x40
	if err := os.WriteFile(tb[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	log := extendLogged(t, dir, 2*done.Population.MaxSteps)
	for _, want := range []string{"metrics.csv is missing", "damaged record"} {
		if !strings.Contains(log, want) {
			t.Errorf("the resume's log does not say %q:\n%s", want, log)
		}
	}
	if kept := bytes.Count(runtest.ReadFile(t, tb[0]), []byte("\x0a\x0ageneration")); events < 3 || kept < events-2 {
		t.Errorf("the earlier session's event file keeps %d of its %d generation tags after one damaged byte", kept, events)
	}

	// metrics.csv cut after generation 1's rows: the rows of generations
	// 2 to the checkpoint's are lost, and said to be (a gap, silently).
	cut := copyRunDir(t, done.OutDir)
	m := runtest.ReadFile(t, filepath.Join(cut, "metrics.csv"))
	lines := bytes.SplitAfter(m, []byte("\n"))
	if err := os.WriteFile(filepath.Join(cut, "metrics.csv"), bytes.Join(lines[:1+done.Population.Size], nil), 0o644); err != nil {
		t.Fatal(err)
	}
	log = extendLogged(t, cut, 2*done.Population.MaxSteps)
	if want := "metrics.csv ends at generation 1, before the checkpoint's 4: the rows of generations 2 to 4 are lost"; !strings.Contains(log, want) {
		t.Errorf("the resume's log does not say %q:\n%s", want, log)
	}
}
