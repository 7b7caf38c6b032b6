package natsrun

import (
	"bytes"
	"context"
	"encoding/base64"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// agentStreamName is the stream that holds the object store AgentBucket
// (JetStream's object store layout, ADR-20: "OBJ_" and the bucket).
const agentStreamName = "OBJ_" + AgentBucket

// agentMetaSubject is the subject of the object name's description in
// AgentBucket's stream: "$O.<bucket>.M." and the name in URL-safe base64
// with padding (ADR-20).
func agentMetaSubject(name string) string {
	return "$O." + AgentBucket + ".M." + base64.URLEncoding.EncodeToString([]byte(name))
}

// deleteAgentFile removes the agent file name from AgentBucket, with the
// delete marker the object store leaves in its place. Every task's files
// have names of their own, so the markers would grow by two per agent and
// generation for as long as the server lives (they were), and listing the
// bucket, as closing or resuming a run does, reads every one of them.
func (h handles) deleteAgentFile(ctx context.Context, name string) error {
	if err := h.agents.Delete(ctx, name); err != nil {
		return err
	}
	return h.agentStream.Purge(ctx, jetstream.WithPurgeSubject(agentMetaSubject(name)))
}

// maxChunk is the object store's chunk size (nats.go's default, 128 KiB).
const maxChunk = 128 << 10

// putAgentFile stores the agent file b as name in AgentBucket, in chunks
// that fit the server's max_payload: at the default chunk size a server
// whose max_payload is below 128 KiB refused every chunk.
func (h handles) putAgentFile(ctx context.Context, nc *nats.Conn, name string, b []byte) error {
	// A chunk travels without headers: the whole max_payload is its.
	chunk := int64(maxChunk)
	if limit := nc.MaxPayload(); limit > 0 && limit < chunk {
		chunk = limit
	}
	meta := jetstream.ObjectMeta{Name: name, Opts: &jetstream.ObjectMetaOptions{ChunkSize: uint32(chunk)}}
	_, err := h.agents.Put(ctx, meta, bytes.NewReader(b))
	return err
}
