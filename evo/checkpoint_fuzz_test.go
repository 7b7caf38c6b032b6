package evo

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// FuzzReadPopulation feeds contents of population.json and population.sha256
// to the checkpoint reader, over an in-memory checkpoint directory that
// holds the real agent files of a tiny run's generation 2 (the seeds are
// that checkpoint's own files). Each input is tried with its checksum file
// and with one repaired to match it, else nearly every mutation stops at
// the checksum. The reader must never panic, every error must name the
// checkpoint's directory or a file in it, and a population it accepts must
// write back (as writeCheckpoint does) to a file that reads back the same.
func FuzzReadPopulation(f *testing.F) {
	cfg, err := ParseConfig([]byte(tinyConfig))
	if err != nil {
		f.Fatal(err)
	}
	cfg.OutDir = filepath.Join(f.TempDir(), "run")
	cfg.Population.MaxSteps = 2 * 3 * 256
	tr, err := New(cfg, Options{})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := tr.Run(context.Background()); err != nil {
		f.Fatal(err)
	}
	const gen = 2
	files := fstest.MapFS{}
	ckpt := filepath.Join(cfg.OutDir, "checkpoints", "gen-000002")
	entries, err := os.ReadDir(ckpt)
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(ckpt, e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		files[e.Name()] = &fstest.MapFile{Data: b, Mode: 0o644}
	}
	if _, err := readCheckpoint(files, ckpt, gen, cfg, tr.digest); err != nil {
		f.Fatalf("the run's own checkpoint: %v", err)
	}
	pop, sum := files[populationFile].Data, files[populationSumFile].Data
	f.Add(pop, sum)
	f.Add(bytes.Replace(pop, []byte(`"version": 2`), []byte(`"version": 1`), 1), []byte{})
	f.Add([]byte(`{}`), sum)

	const dir = "ckpt"
	read := func(t *testing.T, fsys fstest.MapFS, pb, sb []byte) (population, error) {
		t.Helper()
		fsys[populationFile] = &fstest.MapFile{Data: pb, Mode: 0o644}
		fsys[populationSumFile] = &fstest.MapFile{Data: sb, Mode: 0o644}
		p, err := readCheckpoint(fsys, dir, gen, cfg, tr.digest)
		if err != nil && !strings.HasPrefix(err.Error(), dir) {
			t.Fatalf("error names no file of the checkpoint: %v", err)
		}
		return p, err
	}
	f.Fuzz(func(t *testing.T, pb, sb []byte) {
		for _, sb := range [][]byte{sb, sumFileLine(pb)} {
			fsys := maps.Clone(files)
			p, err := read(t, fsys, pb, sb)
			if err != nil {
				continue
			}
			b, err := json.MarshalIndent(p, "", "  ")
			if err != nil {
				t.Fatalf("an accepted population does not encode: %v", err)
			}
			b = append(b, '\n')
			q, err := read(t, fsys, b, sumFileLine(b))
			if err != nil {
				t.Fatalf("an accepted population, written back, is refused: %v", err)
			}
			b2, _ := json.MarshalIndent(q, "", "  ")
			if !bytes.Equal(b, append(b2, '\n')) {
				t.Fatalf("write → read → write changed population.json:\n%s\n%s", b, b2)
			}
		}
	})
}
