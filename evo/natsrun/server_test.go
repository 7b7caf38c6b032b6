package natsrun

import (
	"context"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// TestOlderThan reads nats-server versions as the purge fix's check needs them.
func TestOlderThan(t *testing.T) {
	for v, want := range map[string]bool{"2.9.10": true, "2.10.10": true, "2.10.11": false, "v2.11.0": false,
		"2.15.2": false, "3.0.0": false, "1.99.99": true, "2.10.11-RC.1": false, "nonsense": false, "": false} {
		if got := olderThan(v, fixedPurgeVersion); got != want {
			t.Errorf("olderThan(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestCheckServerWantsJetStream: a server without JetStream is refused with the way to
// start one that has it; one with it passes without a warning (the embedded server is
// recent).
func TestCheckServerWantsJetStream(t *testing.T) {
	for _, js := range []bool{false, true} {
		opts := &server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true, JetStream: js, StoreDir: t.TempDir()}
		s, err := server.NewServer(opts)
		if err != nil {
			t.Fatal(err)
		}
		go s.Start()
		if !s.ReadyForConnections(5e9) {
			t.Fatal("server not ready")
		}
		nc, err := nats.Connect(s.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		warning, err := CheckServer(context.Background(), nc)
		switch {
		case !js && (err == nil || !strings.Contains(err.Error(), "has no JetStream: start it with -js")):
			t.Errorf("without JetStream: %v", err)
		case js && (err != nil || warning != ""):
			t.Errorf("with JetStream: warning %q, error %v", warning, err)
		}
		nc.Close()
		s.Shutdown()
	}
}
