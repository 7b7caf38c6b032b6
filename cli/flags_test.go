package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStepsValue: -max-steps takes whole numbers as written by people —
// digits, digit separators, scientific notation — and nothing else.
func TestStepsValue(t *testing.T) {
	for in, want := range map[string]int{"1000000": 1_000_000, "1_000_000": 1_000_000, "1e6": 1_000_000,
		"2.5e5": 250_000, "0": 0, "-5": -5, "010": 10} {
		var v stepsValue
		if err := v.Set(in); err != nil || int(v) != want {
			t.Errorf("Set(%q): %d, %v; want %d", in, v, err, want)
		}
	}
	for _, in := range []string{"", "1.5", "1e-3", "inf", "nan", "0x10", "1e6x", "_1", "1e300", "one"} {
		var v stepsValue
		if err := v.Set(in); err == nil {
			t.Errorf("Set(%q) = %d, want an error", in, v)
		}
	}
}

// TestMainNamesTheProgram: a program of its own built on Main (its envs
// unknown to evolve) tells the user to run itself, not evolve.
func TestMainNamesTheProgram(t *testing.T) {
	args, stderr := os.Args, os.Stderr
	t.Cleanup(func() { os.Args, os.Stderr, programName = args, stderr, "evolve" })
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	os.Args, os.Stderr = []string{filepath.Join(t.TempDir(), "customenv"), "-bogus"}, w
	code := Main()
	w.Close()
	out, _ := io.ReadAll(r)
	if code != exitBadInput || !strings.Contains(string(out), "run customenv -h for the flags") {
		t.Errorf("Main as customenv: exit %d, stderr:\n%s", code, out)
	}
	for _, args := range [][]string{{"-h"}, {"play", "-h"}} {
		var usage strings.Builder
		Run(context.Background(), args, io.Discard, &usage)
		first, _, _ := strings.Cut(usage.String(), "\n")
		if !strings.HasPrefix(first, "usage: customenv ") || strings.Contains(usage.String(), "\n       evolve ") {
			t.Errorf("customenv %s: the usage does not name customenv:\n%s", strings.Join(args, " "), usage.String())
		}
	}
}

// TestResumeCommandKeepsTheNATSFlags: the command printed to continue a
// stopped NATS run connects as the run did: its credential files, TLS files
// and delivery settings, and the URL's password left for the user to put
// back (never printed).
func TestResumeCommandKeepsTheNATSFlags(t *testing.T) {
	f := trainFlags{set: map[string]bool{"nats-ack-wait": true, "no-target": true}, noTarget: true}
	f.nats = natsFlags{url: "nats://alice:s3cr3t@host:4222", nkey: "auth/user.nk", tlsCA: "ca.pem",
		tlsCert: "c.pem", tlsKey: "k.pem", ackWait: 2 * time.Minute, maxDeliver: 5}
	got := f.resumeCommand("runs/x")
	want := "evolve -resume runs/x -no-target -nats nats://alice:xxxxx@host:4222 -nats-nkey auth/user.nk -nats-tls-ca ca.pem " +
		"-nats-tls-cert c.pem -nats-tls-key k.pem -nats-ack-wait 2m0s (with the password in place of xxxxx)"
	if got != want {
		t.Errorf("resumeCommand:\n got %s\nwant %s", got, want)
	}
}
