package agent

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/evolverl/evolve/envs"
)

// EnvRef names the env an agent was trained on as envs.Make takes it: a
// registry id and its options. The zero value means unknown. An agent file
// records it (file version 2), so that a program, or `evolve play`, can make
// the agent's env from the file alone.
type EnvRef struct {
	ID      string       `json:"id"`
	Options envs.Options `json:"options,omitempty"`
}

// Known reports whether the ref names an env.
func (r EnvRef) Known() bool { return r.ID != "" }

// Make makes the env the ref names (envs.Make).
func (r EnvRef) Make() (envs.Env, error) {
	if !r.Known() {
		return nil, fmt.Errorf("agent: the env it was trained on is not known")
	}
	return envs.Make(r.ID, r.Options)
}

// clone copies the ref; options are JSON-like values, copied one level
// deep as envs.Make only reads them.
func (r EnvRef) clone() EnvRef {
	return EnvRef{ID: r.ID, Options: maps.Clone(r.Options)}
}

// envRefJSON checks that the ref survives the agent file's JSON (options
// that do not, e.g. a channel, are refused when saving, not when loading).
func envRefJSON(r EnvRef) (*EnvRef, error) {
	if !r.Known() {
		if len(r.Options) > 0 {
			return nil, fmt.Errorf("env options %v without an env id", r.Options)
		}
		return nil, nil
	}
	if _, err := json.Marshal(r); err != nil {
		return nil, fmt.Errorf("env %s: options: %w", r.ID, err)
	}
	c := r.clone()
	return &c, nil
}

// decodeEnvRef checks the description's env against the file's version:
// version 2 needs one with an id, version 1 has none.
func decodeEnvRef(r *EnvRef, version string) (EnvRef, error) {
	switch {
	case version == fileVersion1 && r != nil:
		return EnvRef{}, fmt.Errorf("metadata: agent description: env in a version %s file (it came with version %s)", fileVersion1, fileVersion)
	case version == fileVersion1:
		return EnvRef{}, nil
	case r == nil || r.ID == "":
		return EnvRef{}, fmt.Errorf("metadata: agent description: version %s without an env id", fileVersion)
	}
	return *r, nil
}
