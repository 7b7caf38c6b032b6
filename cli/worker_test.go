package cli

import (
	"context"
	"strings"
	"testing"
)

// TestNATSBadInputExitsTwo: flags that cannot work and a server that
// cannot be reached exit 2 with a message, and never print a password.
func TestNATSBadInputExitsTwo(t *testing.T) {
	config, _ := writeTiny(t, 512)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"unreachable", []string{"-config", config, "-nats", "nats://127.0.0.1:1"}, []string{"cannot connect to the NATS server at nats://127.0.0.1:1"}},
		{"password hidden", []string{"-config", config, "-nats", "nats://me:secret@127.0.0.1:1"}, []string{"nats://me:xxxxx@127.0.0.1:1"}},
		{"workers with nats", []string{"-config", config, "-nats", "nats://127.0.0.1:1", "-workers", "2"}, []string{"-workers does not apply with -nats"}},
		{"creds without nats", []string{"-config", config, "-nats-creds", "x.creds"}, []string{"need -nats URL"}},
		{"worker without nats", []string{"worker"}, []string{"-nats URL is required"}},
		{"worker unreachable", []string{"worker", "-nats", "nats://127.0.0.1:1"}, []string{"cannot connect to the NATS server"}},
		{"worker zero slots", []string{"worker", "-nats", "nats://127.0.0.1:1", "-workers", "0"}, []string{"-workers 0"}},
		{"worker cert without key", []string{"worker", "-nats", "tls://127.0.0.1:1", "-nats-tls-cert", "c.pem"}, []string{"go together"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := evolve(context.Background(), tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2; stderr:\n%s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not mention %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "secret") {
				t.Errorf("stderr shows the password:\n%s", stderr)
			}
		})
	}
}
