package natsrun

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// fixedPurgeVersion is the first nats-server release known to purge a work queue by
// subject without skipping other subjects' messages for a consumer of them all
// (nats-server#3838, #5075): before it, a run starting or ending on a server where another
// runs can leave the other's tasks undelivered, and that run waits for ever.
var fixedPurgeVersion = [3]int{2, 10, 11}

// CheckServer checks that the server nc is connected to can hold runs: it must have
// JetStream, or it is an error saying how to start one that does. It returns a warning
// for a server older than the purge fix: one run at a time is safe there, two at once are
// not.
func CheckServer(ctx context.Context, nc *nats.Conn) (warning string, err error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := js.AccountInfo(ctx); err != nil {
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) ||
			errors.Is(err, nats.ErrNoResponders) {
			return "", fmt.Errorf("the NATS server %s has no JetStream: start it with -js and a store directory (nats-server -js -sd DIR), or turn jetstream on in its config (%w)",
				nc.ConnectedUrlRedacted(), err)
		}
		return "", fmt.Errorf("the NATS server's JetStream: %w", err)
	}
	if v := nc.ConnectedServerVersion(); olderThan(v, fixedPurgeVersion) {
		return fmt.Sprintf("nats-server %s is older than %d.%d.%d: a run starting or ending while another runs on it can leave the other's tasks undelivered (nats-server#3838, #5075); run one at a time there, or upgrade",
			v, fixedPurgeVersion[0], fixedPurgeVersion[1], fixedPurgeVersion[2]), nil
	}
	return "", nil
}

// olderThan reports whether version ("2.9.10", "v2.10.11-RC.1") is before min; a
// version it cannot read is not.
func olderThan(version string, min [3]int) bool {
	core, _, _ := strings.Cut(strings.TrimPrefix(version, "v"), "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return false
		}
		if n != min[i] {
			return n < min[i]
		}
	}
	return false
}
