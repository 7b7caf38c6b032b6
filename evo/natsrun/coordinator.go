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
// responders" at once; silence means a subscription the server has not yet
// dropped (its machine died), and the run is taken over.
var askTimeout = 2 * time.Second

// coordinatorInfo is a coordinator's answer: what a refused one prints.
type coordinatorInfo struct {
	Session string    `json:"session"`
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Dir     string    `json:"dir"`
	Since   time.Time `json:"since"`
}

// claim makes p the run's one coordinator on the server: it fails with
// evo.ErrRunInUse when another coordinator of the run answers, and
// otherwise answers for the run itself until release (Close). dir is the run
// directory (absolute).
func (p *Pool) claim(ctx context.Context, dir string) error {
	subject := coordinatorPrefix + p.run
	actx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	m, err := p.nc.RequestWithContext(actx, subject, nil)
	switch {
	case err == nil:
		var other coordinatorInfo
		if err := json.Unmarshal(m.Data, &other); err != nil {
			return fmt.Errorf("another coordinator of this run answered on %s with %q: %w", subject, m.Data, err)
		}
		return inUseError(dir, other)
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, nats.ErrNoResponders):
	case errors.Is(err, context.DeadlineExceeded):
		p.log.Warn(fmt.Sprintf("a coordinator of this run did not answer within %v (its machine is gone, or the server has not yet noticed that it is): this one takes the run over", askTimeout))
	default:
		return fmt.Errorf("ask the NATS server whether another coordinator trains this run: %w", err)
	}
	host, _ := os.Hostname()
	me, err := json.Marshal(coordinatorInfo{Session: p.session, Host: host, PID: os.Getpid(), Dir: dir, Since: time.Now().UTC()})
	if err != nil {
		return err
	}
	if p.coordSub, err = p.nc.Subscribe(subject, func(m *nats.Msg) { m.Respond(me) }); err != nil {
		return fmt.Errorf("subscribe to %s: %w", subject, err)
	}
	// The subscription is on the server before anything of the run is.
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return p.nc.FlushWithContext(fctx)
}

// inUseError is the error of a coordinator of the run in dir refused
// because other trains it: it matches evo.ErrRunInUse and evo.ErrBadInput.
func inUseError(dir string, other coordinatorInfo) error {
	who := fmt.Sprintf("process %d on %s (since %s)", other.PID, other.Host, other.Since.Format("2006-01-02 15:04:05 MST"))
	var err error
	if filepath.Clean(other.Dir) == filepath.Clean(dir) {
		err = fmt.Errorf("%w: %s is being trained through this NATS server by %s; wait for it to end or stop it first",
			evo.ErrRunInUse, dir, who)
	} else {
		err = fmt.Errorf("%w: %s is the same run on this NATS server as %s, which is being trained by %s: the two directories hold one run key (%s), as a copy of a run directory does; to train this one beside it, remove %s (it then becomes a run of its own), or wait for the other to end",
			evo.ErrRunInUse, dir, other.Dir, who, runKeyFile, filepath.Join(dir, runKeyFile))
	}
	return inputError{err}
}

// release stops answering for the run.
func (p *Pool) release() {
	if p.coordSub != nil {
		p.coordSub.Unsubscribe()
		p.coordSub = nil
	}
}
