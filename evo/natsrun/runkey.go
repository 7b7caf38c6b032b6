package natsrun

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/evolverl/evolve/internal/atomicfile"
)

// runKeyFile is the file of a run directory that holds its run key.
const runKeyFile = ".nats-run"

// runKey returns the key that, with the config's generations digest, names
// the run in dir on NATS servers (runID). The run's first coordinator draws
// it at random and writes it to dir/.nats-run; every later one reads it, so
// that a resumed coordinator finds and clears what an earlier session left.
// Host name and directory, which named runs before the file existed, can
// be the same for two runs (two containers with one host name and volume
// path, and the shipped config's seed): the two runs then shared tasks and
// broke each other. A run begun before the file existed (metrics.csv has a
// generation, no key file) keeps the key its id was made of then, so that
// its resume still clears what it left. A dir that does not exist (a Pool
// used outside a trainer's run) gets a key that is not kept.
func runKey(dir string) (string, error) {
	path := filepath.Join(dir, runKeyFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil && len(bytes.TrimSpace(b)) > 0:
		return string(bytes.TrimSpace(b)), nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("read the run's NATS key: %w", err)
	}
	key, err := newRunKey(dir)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return key, nil
	}
	if err := atomicfile.WriteBytes(path, []byte(key+"\n")); err != nil {
		return "", fmt.Errorf("write the run's NATS key: %w", err)
	}
	return key, nil
}

// newRunKey is a new random key, or for a run that trained a generation
// before run keys were kept, the host name and directory that were its key.
func newRunKey(dir string) (string, error) {
	if m, err := os.ReadFile(filepath.Join(dir, "metrics.csv")); err == nil && bytes.Count(m, []byte("\n")) > 1 {
		host, _ := os.Hostname()
		return host + "\n" + dir, nil
	}
	var r [16]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(r[:]), nil
}
