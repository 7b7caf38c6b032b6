package natsrun_test

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// TestSmallMaxPayload: agent files travel in the object store's chunks of
// 128 KiB, which a server whose max_payload is smaller refused, so every
// generation's files failed to store (the coordinator's at once, the
// workers' until the task was given up). Chunks now fit the server's
// max_payload, and the run is the local one.
func TestSmallMaxPayload(t *testing.T) {
	s := startServerWith(t, server.Options{MaxPayload: 48 << 10})
	startWorkers(t, s, 1, 2, nil)
	cfg := tiny(t)
	cfg.Net.MLP.Hidden = []int{128, 128} // agent files of ~400 KiB: several chunks
	cfg.PPO.Net = cfg.Net
	if _, err := runNATS(t, s, cfg, false, nil); err != nil {
		t.Fatal(err)
	}
	here := cfg
	here.OutDir = t.TempDir() + "/local"
	sameRun(t, localRun(t, here), cfg.OutDir)
}
