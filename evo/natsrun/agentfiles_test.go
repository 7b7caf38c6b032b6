package natsrun

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// TestDeleteAgentFileLeavesNothing: a deleted agent file leaves no message
// in the object store's stream, neither its chunks nor a delete marker;
// the marker's subject is where the nats.go in use writes descriptions.
func TestDeleteAgentFileLeavesNothing(t *testing.T) {
	s := embedded(t, true)
	js := jetStreamAt(t, s.ClientURL())
	ctx := context.Background()
	h, _, err := createResources(ctx, js, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	const name = "run/session/g3/a1/out-x"
	if _, err := h.agents.PutBytes(ctx, name, make([]byte, 300<<10)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.agentStream.GetLastMsgForSubject(ctx, agentMetaSubject(name)); err != nil {
		t.Fatalf("no description of %q at %s: %v", name, agentMetaSubject(name), err)
	}
	if err := h.deleteAgentFile(ctx, name); err != nil {
		t.Fatal(err)
	}
	info, err := h.agentStream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 0 {
		t.Errorf("%d messages left in %s after the delete, want 0", info.State.Msgs, agentStreamName)
	}
	if _, err := h.agents.GetInfo(ctx, name, jetstream.GetObjectInfoShowDeleted()); err == nil {
		t.Errorf("%q still described after the delete", name)
	}
}
