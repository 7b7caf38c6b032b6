package cli

import "testing"

// TestRedactHidesEveryPassword: passwords holding what a URL parser reads
// as the end of the user part or of the URL (",", "?", "/") were printed
// whole or in part (a review's "nats://me:1234?abc@host").
func TestRedactHidesEveryPassword(t *testing.T) {
	for in, want := range map[string]string{
		"nats://127.0.0.1:4222":                         "nats://127.0.0.1:4222",
		"nats://me:secret@127.0.0.1:1":                  "nats://me:xxxxx@127.0.0.1:1",
		"nats://TOPSECRET@127.0.0.1:1":                  "nats://xxxxx@127.0.0.1:1",
		"nats://me:pa,ss@host":                          "nats://me:xxxxx@host",
		"nats://me:1234?abc@host":                       "nats://me:xxxxx@host",
		"nats://me:99/xyz@host:4222":                    "nats://me:xxxxx@host:4222",
		"nats://me:a@b@host":                            "nats://me:xxxxx@host",
		"nats://me:s1@h1:1, tls://you:s,2@h2:2":         "nats://me:xxxxx@h1:1, tls://you:xxxxx@h2:2",
		"nats://h1:1,nats://TOKEN@h2:2":                 "nats://h1:1,nats://xxxxx@h2:2",
		"me:secret@host:4222":                           "xxxxx@host:4222",
		"nats://me:secret@127.0.0.1:1,nats://127.0.0.1": "nats://me:xxxxx@127.0.0.1:1,nats://127.0.0.1",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}
