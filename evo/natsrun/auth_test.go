package natsrun_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evolverl/evolve/cli"
	"github.com/evolverl/evolve/evo"
	"github.com/evolverl/evolve/evo/natsrun"
	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// The tests of this file run `evolve -nats` and `evolve worker` through
// cli.Run with each kind of credential the -nats-* flags pass: an NKey
// seed, a creds file (user JWT and seed, decentralized auth), and mutual
// TLS. A run with the right credentials is the local run; a wrong or
// missing one is exit 2 with a message saying what is wrong, at once.

// authGenerations is how many generations the runs of these tests train.
const authGenerations = 2

// authConfig is tiny(t) cut to authGenerations generations.
func authConfig(t *testing.T) evo.Config {
	t.Helper()
	cfg := tiny(t)
	cfg.Population.MaxSteps = authGenerations * cfg.Population.Size * cfg.Population.EvoSteps
	return cfg
}

// evolveCLI runs the evolve command with args; it fails the test unless
// the command ends within 60 s, and then shows what the command and,
// when there is one, the worker (side) had written.
func evolveCLI(t *testing.T, side *natsrun.LockedBuffer, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr natsrun.LockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- cli.Run(ctx, args, &stdout, &stderr) }()
	select {
	case code := <-done:
		return code, stderr.String()
	case <-time.After(60 * time.Second):
	}
	cancel()
	select {
	case code := <-done:
		t.Errorf("evolve %s stopped with exit %d when cancelled", strings.Join(args, " "), code)
	case <-time.After(10 * time.Second):
		t.Errorf("evolve %s did not stop within 10 s of its cancellation", strings.Join(args, " "))
	}
	var worker string
	if side != nil {
		worker = "\nthe worker wrote:\n" + side.String()
	}
	t.Fatalf("evolve %s did not end within 60 s; it wrote:\n%s%s", strings.Join(args, " "), stderr.String(), worker)
	return 0, ""
}

// runWithCredentials trains authConfig(t) as `evolve -config -nats URL
// flags...` with one `evolve worker -nats URL flags...` and checks that the
// run is the one in want and that the worker trained.
func runWithCredentials(t *testing.T, want, url string, flags ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var workerLog natsrun.LockedBuffer
	worker := make(chan int, 1)
	go func() {
		worker <- cli.Run(ctx, append([]string{"worker", "-nats", url, "-workers", "2"}, flags...), io.Discard, &workerLog)
	}()
	cfg := authConfig(t)
	// Not -quiet: should the run stall, its warnings say where.
	code, stderr := evolveCLI(t, &workerLog, append([]string{"-config", writeConfig(t, cfg), "-nats", url}, flags...)...)
	cancel()
	workerCode := <-worker
	if code != 0 {
		t.Fatalf("evolve -nats exited %d: %s\nworker (exit %d): %s", code, stderr, workerCode, workerLog.String())
	}
	sameRun(t, want, cfg.OutDir)
	if workerCode != 0 || !strings.Contains(workerLog.String(), "msg=training") {
		t.Errorf("the worker exited %d, or trained nothing:\n%s", workerCode, workerLog.String())
	}
}

// refused checks that both the coordinator and a worker given url and
// flags exit 2 at once with a message that holds each of want.
func refused(t *testing.T, url string, flags []string, want ...string) {
	t.Helper()
	config := writeConfig(t, authConfig(t))
	for _, args := range [][]string{
		append([]string{"-config", config, "-quiet", "-nats", url}, flags...),
		append([]string{"worker", "-quiet", "-nats", url}, flags...),
	} {
		start := time.Now()
		code, stderr := evolveCLI(t, nil, args...)
		t.Logf("evolve %s: exit %d: %s", strings.Join(args, " "), code, strings.TrimSpace(stderr))
		if code != 2 {
			t.Errorf("evolve %s: exit %d, want 2: %s", strings.Join(args, " "), code, stderr)
		}
		for _, w := range want {
			if !strings.Contains(stderr, w) {
				t.Errorf("evolve %s: the message does not say %q:\n%s", strings.Join(args, " "), w, stderr)
			}
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("evolve %s took %v to fail", strings.Join(args, " "), d)
		}
	}
}

// userSeed returns a new user NKey pair's seed and public key.
func userSeed(t *testing.T) (seed []byte, pub string) {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	if seed, err = kp.Seed(); err != nil {
		t.Fatal(err)
	}
	if pub, err = kp.PublicKey(); err != nil {
		t.Fatal(err)
	}
	return seed, pub
}

// TestNKey: with a server that knows one user NKey, a run through
// -nats-nkey SEED_FILE (coordinator and worker) is the local run; another
// user's seed, a file that holds no seed and a missing file are exit 2.
func TestNKey(t *testing.T) {
	want := localRun(t, authConfig(t))
	seed, pub := userSeed(t)
	s := startServerWith(t, server.Options{Nkeys: []*server.NkeyUser{{Nkey: pub}}})
	runWithCredentials(t, want, s.url(), "-nats-nkey", writeFile(t, "user.nk", seed))

	other, _ := userSeed(t)
	refused(t, s.url(), []string{"-nats-nkey", writeFile(t, "other.nk", other)}, "Authorization Violation")
	bad := writeFile(t, "bad.nk", []byte("not a seed\n"))
	refused(t, s.url(), []string{"-nats-nkey", bad}, "-nats-nkey "+bad)
	missing := filepath.Join(t.TempDir(), "missing.nk")
	refused(t, s.url(), []string{"-nats-nkey", missing}, "-nats-nkey "+missing, "no such file")
	refused(t, s.url(), nil, "Authorization Violation")
}

// decentralized returns the server options of decentralized auth: an
// operator, one account with JetStream that the operator signed, and the
// creds file (user JWT and seed) of a user that the account signed.
func decentralized(t *testing.T) (server.Options, []byte) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	operator, err := nkeys.CreateOperator()
	must(err)
	opub, err := operator.PublicKey()
	must(err)
	resolver := &server.MemAccResolver{}
	// newAccount stores a new account that the operator signed.
	newAccount := func(edit func(*jwt.AccountClaims)) (nkeys.KeyPair, string) {
		t.Helper()
		kp, err := nkeys.CreateAccount()
		must(err)
		pub, err := kp.PublicKey()
		must(err)
		claims := jwt.NewAccountClaims(pub)
		if edit != nil {
			edit(claims)
		}
		token, err := claims.Encode(operator)
		must(err)
		must(resolver.Store(pub, token))
		return kp, pub
	}
	// JetStream needs a system account.
	_, system := newAccount(nil)
	account, _ := newAccount(func(c *jwt.AccountClaims) {
		c.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	})
	oclaims := jwt.NewOperatorClaims(opub)
	oclaims.SystemAccount = system
	_, err = oclaims.Encode(operator) // signs the claims, as the server wants
	must(err)

	seed, upub := userSeed(t)
	ujwt, err := jwt.NewUserClaims(upub).Encode(account)
	must(err)
	creds, err := jwt.FormatUserConfig(ujwt, seed)
	must(err)
	return server.Options{TrustedOperators: []*jwt.OperatorClaims{oclaims}, AccountResolver: resolver, SystemAccount: system}, creds
}

// TestCredsFile: with decentralized auth (operator, account, user JWTs), a
// run through -nats-creds FILE is the local run; a user of another
// operator, a file that holds no credentials and a missing file are exit 2.
func TestCredsFile(t *testing.T) {
	want := localRun(t, authConfig(t))
	opts, creds := decentralized(t)
	s := startServerWith(t, opts)
	runWithCredentials(t, want, s.url(), "-nats-creds", writeFile(t, "user.creds", creds))

	_, foreign := decentralized(t)
	refused(t, s.url(), []string{"-nats-creds", writeFile(t, "foreign.creds", foreign)}, "Authorization Violation")
	bad := writeFile(t, "bad.creds", []byte("not credentials\n"))
	refused(t, s.url(), []string{"-nats-creds", bad}, "-nats-creds "+bad, "no nkey seed found")
	missing := filepath.Join(t.TempDir(), "missing.creds")
	refused(t, s.url(), []string{"-nats-creds", missing}, "-nats-creds "+missing, "no such file")
}

// certs are the PEM files of a test CA, a server certificate for
// 127.0.0.1 and a client certificate, both signed by the CA.
type certs struct {
	ca, serverCert, serverKey, clientCert, clientKey string
}

// newCerts writes a new CA and its server and client certificates (ECDSA
// P-256, valid for an hour) to a temporary directory.
func newCerts(t *testing.T) certs {
	t.Helper()
	dir := t.TempDir()
	write := func(name, kind string, der []byte) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	serial := int64(0)
	// issue makes a certificate from tmpl signed by parent's key (itself
	// when parent is nil) and writes it and its key.
	issue := func(name string, tmpl *x509.Certificate, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (cert, key string, c *x509.Certificate, k *ecdsa.PrivateKey) {
		t.Helper()
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		serial++
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.Subject = pkix.Name{CommonName: "evolve test " + name}
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Minute), time.Now().Add(time.Hour)
		if parent == nil {
			parent, parentKey = tmpl, k
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &k.PublicKey, parentKey)
		if err != nil {
			t.Fatal(err)
		}
		if c, err = x509.ParseCertificate(der); err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return write(name+".pem", "CERTIFICATE", der), write(name+"-key.pem", "EC PRIVATE KEY", kder), c, k
	}
	var cs certs
	ca, _, caCert, caKey := issue("ca", &x509.Certificate{IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}, nil, nil)
	cs.ca = ca
	cs.serverCert, cs.serverKey, _, _ = issue("server", &x509.Certificate{IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, caCert, caKey)
	cs.clientCert, cs.clientKey, _, _ = issue("client", &x509.Certificate{
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, caCert, caKey)
	return cs
}

// TestMutualTLS: with a server that wants TLS and a client certificate of
// its CA, a run through a tls:// URL with -nats-tls-ca, -nats-tls-cert and
// -nats-tls-key is the local run; without the CA (the server's
// certificate is not trusted), without the client certificate, or with a
// client certificate of another CA, it is exit 2.
func TestMutualTLS(t *testing.T) {
	want := localRun(t, authConfig(t))
	cs := newCerts(t)
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: cs.serverCert, KeyFile: cs.serverKey, CaFile: cs.ca, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	s := startServerWith(t, server.Options{TLS: true, TLSVerify: true, TLSConfig: tc, TLSTimeout: 5})
	url := s.url()
	if !strings.HasPrefix(url, "tls://") {
		t.Fatalf("the server's URL is %s, want tls://", url)
	}
	runWithCredentials(t, want, url, "-nats-tls-ca", cs.ca, "-nats-tls-cert", cs.clientCert, "-nats-tls-key", cs.clientKey)

	refused(t, url, []string{"-nats-tls-cert", cs.clientCert, "-nats-tls-key", cs.clientKey}, "certificate signed by unknown authority")
	refused(t, url, []string{"-nats-tls-ca", cs.ca}, "does it want a client certificate")
	other := newCerts(t)
	refused(t, url, []string{"-nats-tls-ca", cs.ca, "-nats-tls-cert", other.clientCert, "-nats-tls-key", other.clientKey}, "does it want a client certificate")
	missing := filepath.Join(t.TempDir(), "missing.pem")
	refused(t, url, []string{"-nats-tls-ca", missing}, "-nats-tls-ca "+missing, "no such file")
	refused(t, url, []string{"-nats-tls-ca", cs.clientKey}, "-nats-tls-ca "+cs.clientKey)
	refused(t, url, []string{"-nats-tls-ca", cs.ca, "-nats-tls-cert", missing, "-nats-tls-key", cs.clientKey}, "-nats-tls-cert "+missing, "no such file")
	refused(t, url, []string{"-nats-tls-ca", cs.ca, "-nats-tls-cert", cs.ca, "-nats-tls-key", cs.clientKey}, "-nats-tls-cert "+cs.ca)
}
