package evo

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/evolverl/evolve/agent"
)

// The agent package exposes no way to read or change an agent's weights or
// hyperparameters in memory. Evolution needs both (parameter and rl_hp
// mutations, the NaN check of the weights), so it goes through the agent's
// documented file format instead: Save to a scratch file, edit the
// safetensors tensors and the JSON description, agent.Load. Load validates
// the result as it validates any file. This file is the only place that
// knows the layout; agent methods for the same edits would replace it.

// agentFile is an agent file held in memory for editing. Tensors keep
// their byte ranges, so edits change values, never sizes.
type agentFile struct {
	entries map[string]tensorEntry // tensor name -> entry
	meta    map[string]string
	data    []byte
}

type tensorEntry struct {
	DType   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// readAgentFile parses an agent file written by agent.Save (which produced
// it a moment ago, so only the checks needed for safe indexing are made).
func readAgentFile(path string) (*agentFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < 8 {
		return nil, fmt.Errorf("%s: too short for a safetensors file", path)
	}
	n := binary.LittleEndian.Uint64(b[:8])
	if n > uint64(len(b)-8) {
		return nil, fmt.Errorf("%s: header length %d exceeds the file", path, n)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b[8:8+n], &raw); err != nil {
		return nil, fmt.Errorf("%s: header: %w", path, err)
	}
	f := &agentFile{entries: map[string]tensorEntry{}, meta: map[string]string{}, data: b[8+n:]}
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &f.meta); err != nil {
				return nil, fmt.Errorf("%s: metadata: %w", path, err)
			}
			continue
		}
		var e tensorEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, fmt.Errorf("%s: tensor %s: %w", path, name, err)
		}
		if e.DType != "F32" || e.Offsets[0] < 0 || e.Offsets[1] < e.Offsets[0] || e.Offsets[1] > int64(len(f.data)) || (e.Offsets[1]-e.Offsets[0])%4 != 0 {
			return nil, fmt.Errorf("%s: tensor %s: unexpected entry %+v", path, name, e)
		}
		f.entries[name] = e
	}
	return f, nil
}

// names returns the tensor names with the given prefix, sorted.
func (f *agentFile) names(prefix string) []string {
	var out []string
	for name := range f.entries {
		if strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// values returns a copy of tensor name's values.
func (f *agentFile) values(name string) []float32 {
	e := f.entries[name]
	raw := f.data[e.Offsets[0]:e.Offsets[1]]
	out := make([]float32, len(raw)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

// setValues overwrites tensor name's values (same length).
func (f *agentFile) setValues(name string, v []float32) {
	e := f.entries[name]
	raw := f.data[e.Offsets[0]:e.Offsets[1]]
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
}

// description returns the agent's JSON description as raw fields.
func (f *agentFile) description() (map[string]json.RawMessage, error) {
	var d map[string]json.RawMessage
	if err := json.Unmarshal([]byte(f.meta["agent"]), &d); err != nil {
		return nil, fmt.Errorf("agent description: %w", err)
	}
	return d, nil
}

// setField replaces one field of the description.
func (f *agentFile) setField(key string, v any) error {
	d, err := f.description()
	if err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	d[key] = b
	out, err := json.Marshal(d)
	if err != nil {
		return err
	}
	f.meta["agent"] = string(out)
	return nil
}

// field decodes one field of the description into v.
func (f *agentFile) field(key string, v any) error {
	d, err := f.description()
	if err != nil {
		return err
	}
	msg, ok := d[key]
	if !ok {
		return fmt.Errorf("agent description has no %q", key)
	}
	return json.Unmarshal(msg, v)
}

// appendHistory records a mutation in the agent's history.
func (f *agentFile) appendHistory(desc string) error {
	var h []string
	if err := f.field("history", &h); err != nil {
		return err
	}
	return f.setField("history", append(h, desc))
}

// write encodes the file to path with a fresh checksum.
func (f *agentFile) write(path string) error {
	header := make(map[string]any, len(f.entries)+1)
	for name, e := range f.entries {
		header[name] = e
	}
	sum := sha256.Sum256(f.data)
	f.meta["checksum"] = "sha256:" + hex.EncodeToString(sum[:])
	header["__metadata__"] = f.meta
	hj, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(hj)%8 != 0 {
		hj = append(hj, ' ')
	}
	var buf bytes.Buffer
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(hj)))
	buf.Write(n[:])
	buf.Write(hj)
	buf.Write(f.data)
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// scratch is a private directory for editing agent files; one file name
// per agent index, so concurrent workers never share a file.
type scratch struct{ dir string }

func (s scratch) path(index int) string {
	return filepath.Join(s.dir, fmt.Sprintf("agent-%d.safetensors", index))
}

// edit saves a, applies fn to its file and loads the result, a new agent
// that replaces a. With fn == nil it only reads (and returns a itself).
func (s scratch) edit(a *agent.PPO, index int, fn func(*agentFile) error) (*agent.PPO, error) {
	path := s.path(index)
	defer os.Remove(path)
	if err := a.Save(path); err != nil {
		return nil, err
	}
	f, err := readAgentFile(path)
	if err != nil {
		return nil, err
	}
	if err := fn(f); err != nil {
		return nil, err
	}
	if err := f.write(path); err != nil {
		return nil, err
	}
	return agent.Load(path)
}

// finiteWeights reports the first trainable tensor (actor, critic,
// log-std) that holds a NaN or an infinity, or "" when all are finite.
func (s scratch) finiteWeights(a *agent.PPO, index int) (string, error) {
	path := s.path(index)
	defer os.Remove(path)
	if err := a.Save(path); err != nil {
		return "", err
	}
	f, err := readAgentFile(path)
	if err != nil {
		return "", err
	}
	for _, name := range append(f.names("actor."), f.names("critic.")...) {
		for _, v := range f.values(name) {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return name, nil
			}
		}
	}
	return "", nil
}
