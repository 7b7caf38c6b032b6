package natsrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/evolverl/evolve/evo"
	"github.com/nats-io/nats.go"
)

// coordinatorPrefix + <run> is the subject on which the run's coordinator
// says who it is. A second coordinator of the run asks first and refuses
// to start when one answers: a copy of a run directory shares its
// .nats-run key, and two coordinators of one run each cleared the other's
// tasks and both waited for ever (the flock of the run directory cannot
// see a copy, nor a directory shared by two machines).
const coordinatorPrefix = "evolve.coordinator."

// askTimeout bounds the wait for a running coordinator's answer. A live
// one answers within milliseconds and a run without one gets "no
// responders" at once; silence means a coordinator that is busy (a slow
// link, a stopped process) or whose machine died before the server dropped
// its connection, and the run is refused rather than taken over: taking over
// a live one would make two.
var askTimeout = 5 * time.Second

// raceWindow is how long a coordinator that has just subscribed waits for
// another one that started at the same moment to answer: both then refuse.
var raceWindow = 250 * time.Millisecond

// sessionHeader carries the asking coordinator's session, so that it does
// not answer itself.
const sessionHeader = "Evolve-Session"

// coordinatorInfo is a coordinator's answer: what a refused one prints.
type coordinatorInfo struct {
	Session string    `json:"session"`
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Dir     string    `json:"dir"`
	Since   time.Time `json:"since"`
}

// stillOurs checks, after the connection was lost and found again since
// the last check, that no other coordinator claimed the run meanwhile (its
// subscription was gone while the connection was): if one answers, p's run
// is lost to it, and Close leaves the server's state of the run alone.
func (p *Pool) stillOurs(ctx context.Context) error {
	n := p.nc.Stats().Reconnects
	if n == p.claimAt || p.coordSub == nil {
		return nil
	}
	if err := p.askOthers(ctx, coordinatorPrefix+p.run, p.dir, raceWindow); err != nil {
		if errors.Is(err, evo.ErrRunInUse) {
			p.lostRun = true
			return fmt.Errorf("after the connection to the NATS server came back: %w", err)
		}
		return err
	}
	p.claimAt = n
	return nil
}

// claim makes p the run's one coordinator on the server: it fails with
// evo.ErrRunInUse when another coordinator of the run answers or is there
// and silent, and otherwise answers for the run itself until release
// (Close). It asks, subscribes, and asks again for a coordinator that
// started at the same moment (both then refuse). dir is the run directory
// (absolute).
func (p *Pool) claim(ctx context.Context, dir string) error {
	subject := coordinatorPrefix + p.run
	p.dir, p.claimAt = dir, p.nc.Stats().Reconnects
	if err := p.askOthers(ctx, subject, dir, askTimeout); err != nil {
		return err
	}
	me, err := json.Marshal(coordinatorInfo{Session: p.session, Host: host(), PID: os.Getpid(), Dir: dir, Since: time.Now().UTC()})
	if err != nil {
		return err
	}
	p.coordSub, err = p.nc.Subscribe(subject, func(m *nats.Msg) {
		if m.Header.Get(sessionHeader) != p.session {
			m.Respond(me)
		}
	})
	if err != nil {
		return fmt.Errorf("subscribe to %s: %w", subject, err)
	}
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := p.nc.FlushWithContext(fctx); err != nil {
		return err
	}
	// The subscription is on the server: one that started at the same
	// moment answers now (silence is this one's own subscription).
	return p.askOthers(ctx, subject, dir, raceWindow)
}

// askOthers asks on subject for another coordinator of the run for up to
// wait: nil when none is subscribed (or, once p subscribed, none answered),
// an ErrRunInUse error naming the one that answered or that is there and
// silent.
func (p *Pool) askOthers(ctx context.Context, subject, dir string, wait time.Duration) error {
	actx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	req := nats.NewMsg(subject)
	req.Header.Set(sessionHeader, p.session)
	m, err := p.nc.RequestMsgWithContext(actx, req)
	switch {
	case err == nil:
		var other coordinatorInfo
		if err := json.Unmarshal(m.Data, &other); err != nil {
			return inputError{fmt.Errorf("%w: something answers for this run on %s with %q (%v), not a coordinator of this build: stop it", evo.ErrRunInUse, subject, m.Data, err)}
		}
		return inUseError(dir, other)
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, nats.ErrNoResponders):
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		if p.coordSub != nil {
			return nil // only p's own subscription heard it
		}
		return inputError{fmt.Errorf("%w: a coordinator of this run is on this NATS server but did not answer within %v: it is busy (a slow link, a stopped process) or its machine died and the server has not yet dropped its connection (it does within a few minutes); stop it, or try again later", evo.ErrRunInUse, wait)}
	}
	return fmt.Errorf("ask the NATS server whether another coordinator trains this run: %w", err)
}

// inUseError is the error of a coordinator of the run in dir refused
// because other trains it: it matches evo.ErrRunInUse and evo.ErrBadInput.
func inUseError(dir string, other coordinatorInfo) error {
	who := fmt.Sprintf("process %d on %s (since %s)", other.PID, other.Host, other.Since.Format("2006-01-02 15:04:05 MST"))
	var err error
	if filepath.Clean(other.Dir) == filepath.Clean(dir) && other.Host == host() {
		err = fmt.Errorf("%w: %s is being trained through this NATS server by %s; wait for it to end or stop it first",
			evo.ErrRunInUse, dir, who)
	} else {
		err = fmt.Errorf("%w: %s is the same run on this NATS server as %s, which is being trained by %s: the two directories hold one run key (%s), as a copy of a run directory does; to train this one beside it, remove %s (it then becomes a run of its own), or wait for the other to end",
			evo.ErrRunInUse, dir, other.Dir, who, runKeyFile, filepath.Join(dir, runKeyFile))
	}
	return inputError{err}
}

// host is this machine's name, "" when it cannot be told.
func host() string {
	h, _ := os.Hostname()
	return h
}

// release stops answering for the run.
func (p *Pool) release() {
	if p.coordSub != nil {
		p.coordSub.Unsubscribe()
		p.coordSub = nil
	}
}
