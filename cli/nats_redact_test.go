package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

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

// TestConnectErrorsHideThePassword: nats.go cuts a URL list at every ","
// and quotes what url.Parse refuses, so a password holding ",", "/", "?",
// "%" or a space showed, in part or whole, in the connection error.
func TestConnectErrorsHideThePassword(t *testing.T) {
	for _, tc := range []struct{ url, password, want string }{
		// A comma in a password is refused before anything is dialled.
		{"nats://me:qzq,wxw@127.0.0.1:1", "qzq,wxw", "a password holds a comma"},
		{"nats://me:qz,xj@127.0.0.1:1", "qz,xj", "a password holds a comma"},
		{"nats://me:se/cret@127.0.0.1:1", "se/cret", "cannot parse URL 1 of the list"},
		{"nats://me:se?cr#et@127.0.0.1:1", "se?cr#et", "cannot parse URL 1 of the list"},
		{"nats://me:s%zzcret@127.0.0.1:1", "s%zzcret", "cannot parse URL 1 of the list"},
		{"nats://me:pa ss@127.0.0.1:1", "pa ss", "cannot parse URL 1 of the list"},
		{"nats://127.0.0.1:2, nats://me:kp2,x@127.0.0.1:1", "kp2,x", "a password holds a comma"},
		// Both parts parse: nats.go would dial the host "me".
		{"nats://me:,zzz@127.0.0.1:1", ",zzz", "a password holds a comma"},
	} {
		code, _, stderr := evolve(context.Background(), "-config", "a.toml", "-nats", tc.url)
		exitsTwoSaying(t, code, stderr, "cannot connect to the NATS server at ", "me:xxxxx@127.0.0.1:1", tc.want)
		for _, part := range strings.Split(tc.password, ",") {
			if len(part) > 1 && strings.Contains(stderr, part) {
				t.Errorf("-nats %s: stderr shows %q of the password:\n%s", tc.url, part, stderr)
			}
		}
	}
	// (The parts above are distinctive: "se" of "se,cret" is in "parse".)
	// An error that quotes no credential is nats.go's own, even where the
	// password shares words with it.
	code, _, stderr := evolve(context.Background(), "-config", "a.toml", "-nats", "nats://me:available@127.0.0.1:1")
	exitsTwoSaying(t, code, stderr, "nats://me:xxxxx@127.0.0.1:1: nats: no servers xxxxx for connection")
	code, _, stderr = evolve(context.Background(), "-config", "a.toml", "-nats", "nats://me:s3cr3t@127.0.0.1:1")
	exitsTwoSaying(t, code, stderr, "nats://me:xxxxx@127.0.0.1:1: nats: no servers available for connection")
}

// TestPercentEncodedPasswordConnects: the advice of the error above works —
// a server whose password holds "," and "/" takes it percent-encoded.
func TestPercentEncodedPasswordConnects(t *testing.T) {
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, Username: "me", Password: "se,cr/et", NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	defer s.Shutdown()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	addr := strings.TrimPrefix(s.ClientURL(), "nats://")
	f := natsFlags{url: "nats://me:se%2Ccr%2Fet@" + addr}
	nc, err := f.connect("test")
	if err != nil {
		t.Fatalf("connect with the percent-encoded password: %v", err)
	}
	nc.Close()
	// A wrong password is nats.go's word for it, whatever the password.
	for _, pw := range []string{"wrong", "Violation!", "on"} {
		f.url = "nats://me:" + pw + "@" + addr
		if _, err := f.connect("test"); err == nil || !strings.Contains(err.Error(), "nats: Authorization Violation") {
			t.Errorf("connect with the wrong password %q: %v", pw, err)
		}
	}
}

// TestCommaPasswordIsNotDialled: a password with "@" and "," split by
// nats.go at the comma would make a piece of it a host to look up (sent to
// the resolver) and another an auth token; it is refused before that.
func TestCommaPasswordIsNotDialled(t *testing.T) {
	f := natsFlags{url: "nats://bob:K9@xqzv,7Lm2@127.0.0.1:1"}
	start := time.Now()
	_, err := f.connect("test")
	if err == nil || !strings.Contains(err.Error(), "a password holds a comma") || strings.Contains(err.Error(), "xqzv") ||
		strings.Contains(err.Error(), "lookup") {
		t.Errorf("connect: %v; want the comma refused, naming no part of the password", err)
	}
	if time.Since(start) > time.Second {
		t.Errorf("connect took %v: it dialled", time.Since(start))
	}
}
