package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/evolverl/evolve/evo/natsrun"
	"github.com/nats-io/nats.go"
)

// natsFlags are the flags that reach a NATS server, shared by the
// coordinator (evolve -nats) and workers (evolve worker).
type natsFlags struct {
	url                    string
	creds, nkey            string
	tlsCA, tlsCert, tlsKey string
	// Coordinator only: the work queue's delivery settings.
	ackWait    time.Duration
	maxDeliver int
}

// register adds the flags to fs; coordinator adds the delivery settings.
func (f *natsFlags) register(fs *flag.FlagSet, coordinator bool) {
	fs.StringVar(&f.url, "nats", "", "train through the NATS JetStream server at `URL` (nats://[user:password@]host:4222, tls://...)")
	fs.StringVar(&f.creds, "nats-creds", "", "authenticate to NATS with the credentials `FILE` (JWT and NKey seed)")
	fs.StringVar(&f.nkey, "nats-nkey", "", "authenticate to NATS with the NKey seed `FILE`")
	fs.StringVar(&f.tlsCA, "nats-tls-ca", "", "trust the NATS server's certificates signed by the CA in `FILE`")
	fs.StringVar(&f.tlsCert, "nats-tls-cert", "", "present the client certificate in `FILE` to NATS (with -nats-tls-key)")
	fs.StringVar(&f.tlsKey, "nats-tls-key", "", "the client certificate's private key `FILE`")
	if coordinator {
		fs.DurationVar(&f.ackWait, "nats-ack-wait", 30*time.Second, "redeliver a task when its worker has not reported for `D` (workers report every D/3)")
		fs.IntVar(&f.maxDeliver, "nats-max-deliver", 5, "fail the run when a task was delivered `N` times without a result")
	}
}

// check validates the flags that need no server; it returns "" when they
// are fine.
func (f *natsFlags) check() string {
	switch {
	case f.url == "" && (f.creds != "" || f.nkey != "" || f.tlsCA != "" || f.tlsCert != "" || f.tlsKey != ""):
		return "the -nats-* flags need -nats URL"
	case (f.tlsCert == "") != (f.tlsKey == ""):
		return "-nats-tls-cert and -nats-tls-key go together"
	case f.creds != "" && f.nkey != "":
		return "-nats-creds and -nats-nkey exclude each other: a creds file holds its own NKey seed"
	case f.ackWait < 0:
		return fmt.Sprintf("-nats-ack-wait %v: want > 0 (leave it out for 30s)", f.ackWait)
	case f.maxDeliver < 0:
		return fmt.Sprintf("-nats-max-deliver %d: want > 0 (leave it out for 5)", f.maxDeliver)
	}
	return ""
}

// connect opens the connection: it fails at once when the server cannot
// be reached, and once connected it reconnects for as long as it takes (a
// restarted server loses nothing of the run). Each credential file is read
// first, so that one that cannot be read or parsed is an error naming its
// flag and file rather than a failure to connect.
func (f *natsFlags) connect(name string) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second)}
	if f.creds != "" {
		o := nats.UserCredentials(f.creds)
		if err := loadCreds(o); err != nil {
			return nil, fmt.Errorf("-nats-creds %s: %w", f.creds, err)
		}
		opts = append(opts, o)
	}
	if f.nkey != "" {
		o, err := nats.NkeyOptionFromSeed(f.nkey)
		if err != nil {
			return nil, fmt.Errorf("-nats-nkey %s: %w", f.nkey, err)
		}
		opts = append(opts, o)
	}
	if f.tlsCA != "" {
		o := nats.RootCAs(f.tlsCA)
		if err := o(&nats.Options{}); err != nil {
			return nil, fmt.Errorf("-nats-tls-ca %s: %w", f.tlsCA, err)
		}
		opts = append(opts, o)
	}
	if f.tlsCert != "" {
		o := nats.ClientCert(f.tlsCert, f.tlsKey)
		if err := o(&nats.Options{}); err != nil {
			return nil, fmt.Errorf("-nats-tls-cert %s -nats-tls-key %s: %w", f.tlsCert, f.tlsKey, err)
		}
		opts = append(opts, o)
	}
	if advice := commaAdvice(f.url); advice != "" {
		// Not even tried: nats.go would split the password at the comma
		// and dial (and look up) a piece of it as a host.
		return nil, fmt.Errorf("cannot connect to the NATS server at %s:%s", redact(f.url), advice)
	}
	urls, err := natsURLs(f.url)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to the NATS server at %s: %w", redact(f.url), err)
	}
	for i, u := range urls {
		// nats.go dials any scheme as NATS: http://host:4222 would work,
		// and http://host (port 80) fail with a timeout that says nothing.
		if s := strings.ToLower(u.Scheme); s != "nats" && s != "tls" && s != "ws" && s != "wss" {
			return nil, fmt.Errorf("cannot connect to the NATS server at %s: URL %d of the list is %s://…: want nats://HOST:PORT (or tls://, ws://, wss://)",
				redact(f.url), i+1, u.Scheme)
		}
	}
	nc, err := nats.Connect(f.url, opts...)
	if err != nil {
		// Not wrapped: the error nats.go wrote may quote a credential.
		return nil, fmt.Errorf("cannot connect to the NATS server at %s: %s%s%s",
			redact(f.url), hideCredentials(err.Error(), f.url, urls), commaAdvice(f.url), tlsHint(err))
	}
	return nc, nil
}

// loadCreds reads the user JWT and the NKey seed of the creds option o
// (which nats.go reads only when the server asks for them).
func loadCreds(o nats.Option) error {
	var scratch nats.Options
	if err := o(&scratch); err != nil {
		return err
	}
	if _, err := scratch.UserJWT(); err != nil {
		return err
	}
	_, err := scratch.SignatureCB([]byte("nonce"))
	return err
}

// tlsHint is what to add to a connection error of a server that closed
// the connection after the TLS handshake, or sent an alert about the
// client's certificate: most likely it wants a client certificate (of a
// CA it trusts) that it did not get.
func tlsHint(err error) string {
	msg := err.Error()
	if errors.Is(err, nats.ErrTLS) && strings.Contains(msg, "after TLS handshake") ||
		strings.Contains(msg, "remote error: tls:") && strings.Contains(msg, "certificate") {
		return " (the server refused the TLS connection: does it want a client certificate, -nats-tls-cert and -nats-tls-key, of a CA it trusts?)"
	}
	return ""
}

// settings are the coordinator's delivery settings.
func (f *natsFlags) settings() natsrun.Settings {
	return natsrun.Settings{AckWait: f.ackWait, MaxDeliver: f.maxDeliver}
}

// natsPool connects the coordinator to the server and returns its pool,
// or nil and the exit status after saying why not on stderr. The pool
// owns the connection: Close closes both.
func natsPool(nf *natsFlags, log *slog.Logger, stderr io.Writer) (*coordinatorPool, int) {
	nc, err := nf.connect("evolve coordinator")
	if err != nil {
		fmt.Fprintf(stderr, "evolve: %v\n", err)
		return nil, exitBadInput
	}
	// Before the run directory is made: a server without JetStream is bad input.
	warning, err := natsrun.CheckServer(context.Background(), nc)
	if err != nil {
		nc.Close()
		fmt.Fprintf(stderr, "evolve: %v\n", err)
		return nil, exitBadInput
	}
	// Through the run's log, which -quiet silences but for errors.
	for _, w := range []string{warning, unversionedWarning()} {
		if w != "" {
			log.Warn(w)
		}
	}
	return &coordinatorPool{Pool: natsrun.NewPool(nc, natsrun.PoolOptions{Settings: nf.settings(), Log: log}), nc: nc}, exitOK
}

// unversionedWarning is a warning for a build without a version or a
// version-control revision, "" for others: every such build reports
// "(devel)", so the same-build check between a coordinator and its workers
// cannot tell two of them apart.
func unversionedWarning() string {
	v := natsrun.Version()
	if !strings.HasPrefix(v, "(devel) protocol") && !strings.HasPrefix(v, "(unknown) protocol") {
		return ""
	}
	return "this build has no version (built without version-control stamps: go run, go build -buildvcs=false, " +
		"or from a source tarball), so another such build is not told apart from it: build the coordinator " +
		"and every worker as one binary (go install ./cmd/evolve in a git checkout), and copy it"
}

// coordinatorPool is a natsrun.Pool with its connection.
type coordinatorPool struct {
	*natsrun.Pool
	nc *nats.Conn
}

// Close removes the run from the server and closes the connection.
func (p *coordinatorPool) Close() error {
	defer p.nc.Close()
	return p.Pool.Close()
}
