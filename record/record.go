// Package record writes and reads trajectories — the steps an agent took in
// an env — as NumPy .npz files, so that Python tools (numpy.load) read them
// as they are.
//
// A Writer collects Steps in memory; Close writes the file at once,
// atomically, with one array per field of a step, row i being step i:
//
//	observations    [N, obs]  float32 ('<f4'), the observation the action answered
//	actions         [N, act]  float32, the action as sent to the env
//	rewards         [N]       float64 ('<f8')
//	terminated      [N]       bool ('|b1')
//	truncated       [N]       bool
//	episode_starts  [N]       bool, true on an episode's first step
//	values          [N]       float32, the critic's value of the observation
//	log_probs       [N]       float32, log π(action | observation)
//	action_masks    [N, mask] bool, the actions legal at the observation
//
// obs and act are the flat sizes of the spaces; a Discrete action is one
// column. action_masks is there only when some step had a mask (a masked
// env's; mask is envs.MaskSize of the action space), a step without one
// legal everywhere. The entry spaces.npy, a uint8 ('|u1') array, holds the UTF-8 JSON
// {"observation": …, "action": …}, both spaces in envs.MarshalSpace's form,
// so that every entry of the file loads as an array in NumPy
// (json.loads(d["spaces"].tobytes())). Read checks all of it, and also
// reads files of earlier builds, whose spaces were a raw spaces.json entry.
//
// A dataset (CreateDataset; `evolve sample` writes them) is a recording
// with five more arrays saying which agent, generation and episode each
// step came from: see Source.
package record

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/evolverl/evolve/envs"
	"github.com/evolverl/evolve/internal/atomicfile"
)

// Step is one step of a trajectory.
type Step struct {
	Obs, Action                         []float32
	Reward                              float64
	Terminated, Truncated, EpisodeStart bool
	Value, LogProb                      float32
	// ActionMask is the env's action mask for Obs (Info.ActionMask): nil
	// when every action is legal.
	ActionMask []bool
	// Source is where a dataset's step came from (CreateDataset); nil in
	// a recording (Create).
	Source *Source
}

// Writer collects steps and writes them to a .npz file on Close.
type Writer struct {
	path     string
	obs, act envs.Space
	spaces   []byte // the JSON of spaces.npy
	dataset  []byte // the JSON of dataset.npy; nil for a recording
	t        Trajectory
	masked   bool // some step had a mask: the file has action_masks
	closed   bool
}

// Create returns a Writer to path for observations of obs and actions of
// act. Nothing is written before Close.
func Create(path string, obs, act envs.Space) (*Writer, error) {
	spaces, err := marshalSpaces(obs, act)
	if err != nil {
		return nil, fmt.Errorf("record %s: %w", path, err)
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("record %s: %w", path, err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("record %s: %s is not a directory", path, filepath.Dir(path))
	}
	return &Writer{path: path, obs: obs, act: act, spaces: spaces,
		t: Trajectory{ObservationSpace: obs, ActionSpace: act}}, nil
}

// spacesJSON is the content of spaces.npy (the spaces.json entry of earlier
// builds).
type spacesJSON struct {
	Observation json.RawMessage `json:"observation"`
	Action      json.RawMessage `json:"action"`
}

func marshalSpaces(obs, act envs.Space) ([]byte, error) {
	var j spacesJSON
	for _, s := range []struct {
		name  string
		space envs.Space
		dst   *json.RawMessage
	}{{"observation", obs, &j.Observation}, {"action", act, &j.Action}} {
		if s.space == nil {
			return nil, fmt.Errorf("no %s space", s.name)
		}
		if err := s.space.Validate(); err != nil {
			return nil, fmt.Errorf("%s space %v: %w", s.name, s.space, err)
		}
		b, err := envs.MarshalSpace(s.space)
		if err != nil {
			return nil, fmt.Errorf("%s space: %w", s.name, err)
		}
		*s.dst = b
	}
	return json.Marshal(j)
}

// Add appends a step; its observation and action are copied.
func (w *Writer) Add(s Step) error {
	if w.closed {
		return fmt.Errorf("record %s: add after close", w.path)
	}
	n := len(w.t.Rewards)
	if len(s.Obs) != w.obs.FlatSize() {
		return fmt.Errorf("record %s: step %d: %d observation values, want %d for %v", w.path, n, len(s.Obs), w.obs.FlatSize(), w.obs)
	}
	if len(s.Action) != w.act.FlatSize() {
		return fmt.Errorf("record %s: step %d: %d action values, want %d for %v", w.path, n, len(s.Action), w.act.FlatSize(), w.act)
	}
	if _, box := w.act.(envs.Box); !box && !w.act.Contains(s.Action) {
		// A choice outside the space could not have been taken; a Box's
		// values are left as given (a policy's sample before the env clips it).
		return fmt.Errorf("record %s: step %d: action %v is not in %v", w.path, n, s.Action, w.act)
	}
	if s.ActionMask != nil {
		if m, ok := envs.MaskSize(w.act); !ok {
			return fmt.Errorf("record %s: step %d: an action mask, but %v takes none", w.path, n, w.act)
		} else if len(s.ActionMask) != m {
			return fmt.Errorf("record %s: step %d: an action mask of %d entries, want %d for %v", w.path, n, len(s.ActionMask), m, w.act)
		}
	}
	switch {
	case w.dataset != nil && s.Source == nil:
		return fmt.Errorf("record %s: step %d: a dataset's steps need their Source", w.path, n)
	case w.dataset == nil && s.Source != nil:
		return fmt.Errorf("record %s: step %d: a Source, but the file is a recording (record.CreateDataset writes datasets)", w.path, n)
	}
	t := &w.t
	if s.Source != nil {
		t.Sources = append(t.Sources, *s.Source)
	}
	t.Observations = append(t.Observations, append([]float32(nil), s.Obs...))
	t.Actions = append(t.Actions, append([]float32(nil), s.Action...))
	t.Rewards = append(t.Rewards, s.Reward)
	t.Terminated = append(t.Terminated, s.Terminated)
	t.Truncated = append(t.Truncated, s.Truncated)
	t.EpisodeStarts = append(t.EpisodeStarts, s.EpisodeStart)
	t.Values = append(t.Values, s.Value)
	t.LogProbs = append(t.LogProbs, s.LogProb)
	t.ActionMasks = append(t.ActionMasks, slices.Clone(s.ActionMask))
	w.masked = w.masked || s.ActionMask != nil
	return nil
}

// Len returns the number of steps added.
func (w *Writer) Len() int { return len(w.t.Rewards) }

// Close writes the file: all of it, through a temporary file renamed over
// path, or (on error) nothing. A second Close does nothing.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if err := atomicfile.Write(w.path, w.writeNPZ); err != nil {
		return fmt.Errorf("record %s: %w", w.path, err)
	}
	return nil
}

func (w *Writer) writeNPZ(out io.Writer) error {
	t := &w.t
	n := len(t.Rewards)
	z := zip.NewWriter(out)
	entries := []npzEntry{
		{"observations", dtypeF32, []int{n, w.obs.FlatSize()}, encodeF32(flatten(t.Observations))},
		{"actions", dtypeF32, []int{n, w.act.FlatSize()}, encodeF32(flatten(t.Actions))},
		{"rewards", dtypeF64, []int{n}, encodeF64(t.Rewards)},
		{"terminated", dtypeBool, []int{n}, encodeBool(t.Terminated)},
		{"truncated", dtypeBool, []int{n}, encodeBool(t.Truncated)},
		{"episode_starts", dtypeBool, []int{n}, encodeBool(t.EpisodeStarts)},
		{"values", dtypeF32, []int{n}, encodeF32(t.Values)},
		{"log_probs", dtypeF32, []int{n}, encodeF32(t.LogProbs)},
		{"spaces", dtypeU8, []int{len(w.spaces)}, w.spaces},
	}
	if w.masked {
		m, _ := envs.MaskSize(w.act)
		entries = append(entries, npzEntry{"action_masks", dtypeBool, []int{n, m}, encodeBool(maskRows(t.ActionMasks, m))})
	}
	if w.dataset != nil {
		entries = append(entries, datasetEntries(t.Sources)...)
		entries = append(entries, npzEntry{"dataset", dtypeU8, []int{len(w.dataset)}, w.dataset})
	}
	for _, e := range entries {
		f, err := z.CreateHeader(&zip.FileHeader{Name: e.name + ".npy", Method: zip.Deflate})
		if err != nil {
			return err
		}
		if err := writeNPY(f, e.descr, e.shape, e.data); err != nil {
			return fmt.Errorf("%s.npy: %w", e.name, err)
		}
	}
	return z.Close()
}

// npzEntry is one array of a .npz file, its values encoded.
type npzEntry struct {
	name, descr string
	shape       []int
	data        []byte
}

// maskRows flattens masks of width m, a nil one all true.
func maskRows(masks [][]bool, m int) []bool {
	out := make([]bool, 0, len(masks)*m)
	for _, r := range masks {
		if r == nil {
			for range m {
				out = append(out, true)
			}
			continue
		}
		out = append(out, r...)
	}
	return out
}

func flatten(rows [][]float32) []float32 {
	var out []float32
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

// Trajectory is a recorded trajectory: row i of every field is step i.
type Trajectory struct {
	Observations          [][]float32
	Actions               [][]float32
	Rewards               []float64
	Terminated, Truncated []bool
	EpisodeStarts         []bool
	Values, LogProbs      []float32
	// ActionMasks is each step's action mask; nil when the file has none
	// (no step had one, or it was written before recordings kept them).
	ActionMasks                   [][]bool
	ObservationSpace, ActionSpace envs.Space
	// Sources is where each step came from, and Dataset the JSON of how
	// the dataset was made: a dataset's (see CreateDataset); nil in a
	// recording.
	Sources []Source
	Dataset json.RawMessage
}

// Len returns the number of steps.
func (t *Trajectory) Len() int { return len(t.Rewards) }

// Read reads a trajectory that a Writer wrote (or numpy wrote alike),
// checking every entry's presence, dtype and shape: the arrays must agree
// on the number of steps and the observations and actions must be as wide
// as the spaces in spaces.npy.
func Read(path string) (*Trajectory, error) {
	t, err := read(path)
	if err != nil {
		return nil, fmt.Errorf("record %s: %w", path, err)
	}
	return t, nil
}

func read(path string) (*Trajectory, error) {
	z, err := zip.OpenReader(path)
	if err != nil {
		return nil, fmt.Errorf("not a .npz (zip) file: %w", err)
	}
	defer z.Close()
	a := &npzArchive{files: map[string]*zip.File{}, steps: -1}
	for _, f := range z.File {
		a.files[f.Name] = f
	}
	t := &Trajectory{}
	if t.ObservationSpace, t.ActionSpace, err = a.spaces(); err != nil {
		return nil, err
	}
	ow, aw := t.ObservationSpace.FlatSize(), t.ActionSpace.FlatSize()
	b, err := a.array("observations", dtypeF32, ow)
	if err != nil {
		return nil, err
	}
	t.Observations = a.rows(decodeF32(b), ow)
	if b, err = a.array("actions", dtypeF32, aw); err != nil {
		return nil, err
	}
	t.Actions = a.rows(decodeF32(b), aw)
	if b, err = a.array("rewards", dtypeF64, 0); err != nil {
		return nil, err
	}
	t.Rewards = decodeF64(b)
	for _, e := range []struct {
		name string
		dst  *[]bool
	}{{"terminated", &t.Terminated}, {"truncated", &t.Truncated}, {"episode_starts", &t.EpisodeStarts}} {
		if b, err = a.array(e.name, dtypeBool, 0); err != nil {
			return nil, err
		}
		if *e.dst, err = decodeBool(b); err != nil {
			return nil, fmt.Errorf("%s.npy: %w", e.name, err)
		}
	}
	if b, err = a.array("values", dtypeF32, 0); err != nil {
		return nil, err
	}
	t.Values = decodeF32(b)
	if b, err = a.array("log_probs", dtypeF32, 0); err != nil {
		return nil, err
	}
	t.LogProbs = decodeF32(b)
	if err := readMasks(t, a); err != nil {
		return nil, err
	}
	if err := readSources(t, a.files, a.array); err != nil {
		return nil, err
	}
	return t, nil
}

// readMasks reads action_masks.npy when the file has it.
func readMasks(t *Trajectory, a *npzArchive) error {
	if a.files["action_masks.npy"] == nil {
		return nil
	}
	m, ok := envs.MaskSize(t.ActionSpace)
	if !ok {
		return fmt.Errorf("action_masks.npy, but the action space %v takes no mask", t.ActionSpace)
	}
	b, err := a.array("action_masks", dtypeBool, m)
	if err != nil {
		return err
	}
	v, err := decodeBool(b)
	if err != nil {
		return fmt.Errorf("action_masks.npy: %w", err)
	}
	t.ActionMasks = make([][]bool, a.steps)
	for i := range t.ActionMasks {
		t.ActionMasks[i] = v[i*m : (i+1)*m : (i+1)*m]
	}
	return nil
}

// npzArchive reads the entries of a trajectory's .npz. steps is the number
// of steps, -1 until the first array (observations.npy) has set it.
type npzArchive struct {
	files map[string]*zip.File
	steps int
}

// openEntry opens the entry name of files and returns it with its
// uncompressed size.
func openEntry(files map[string]*zip.File, name string) (io.ReadCloser, uint64, error) {
	f := files[name]
	if f == nil {
		return nil, 0, fmt.Errorf("no entry %s", name)
	}
	r, err := f.Open()
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", name, err)
	}
	return r, f.UncompressedSize64, nil
}

// small returns the bytes of the entry name, at most 1 MiB.
func (a *npzArchive) small(name string) ([]byte, error) {
	r, _, err := openEntry(a.files, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, 1<<20+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > 1<<20 {
		return nil, fmt.Errorf("%s: larger than 1 MiB", name)
	}
	return b, nil
}

// spaces decodes the observation and action spaces.
func (a *npzArchive) spaces() (obs, act envs.Space, err error) {
	raw, err := spacesEntry(a.files, a.small)
	if err != nil {
		return nil, nil, err
	}
	var sj spacesJSON
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sj); err != nil {
		return nil, nil, fmt.Errorf("spaces: %w", err)
	}
	if sj.Observation == nil || sj.Action == nil {
		return nil, nil, errors.New(`spaces: want both "observation" and "action"`)
	}
	if obs, err = envs.UnmarshalSpace(sj.Observation); err != nil {
		return nil, nil, fmt.Errorf("spaces: observation %w", err)
	}
	if act, err = envs.UnmarshalSpace(sj.Action); err != nil {
		return nil, nil, fmt.Errorf("spaces: action %w", err)
	}
	return obs, act, nil
}

// array reads the entry name.npy, checks its dtype and shape ([steps] or
// [steps, width] for width > 0; the first array read sets steps) and
// returns its raw values.
func (a *npzArchive) array(name, descr string, width int) ([]byte, error) {
	entry := name + ".npy"
	r, size, err := openEntry(a.files, entry)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	h, data, err := readNPY(r, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", entry, err)
	}
	if h.descr != descr {
		return nil, fmt.Errorf("%s: dtype %q, want %q", entry, h.descr, descr)
	}
	want := []int{a.steps}
	if width > 0 {
		want = append(want, width)
	}
	ok := len(h.shape) == len(want)
	for i := 0; ok && i < len(want); i++ {
		if a.steps < 0 && i == 0 {
			continue
		}
		ok = h.shape[i] == want[i]
	}
	if !ok {
		ws := fmt.Sprint(want)
		if a.steps < 0 {
			ws = fmt.Sprintf("[N %d]", width)
		}
		return nil, fmt.Errorf("%s: shape %v, want %s", entry, h.shape, ws)
	}
	if a.steps < 0 {
		a.steps = h.shape[0]
	}
	return data, nil
}

// rows cuts v into steps rows of width values, each capped at its end.
func (a *npzArchive) rows(v []float32, width int) [][]float32 {
	out := make([][]float32, a.steps)
	for i := range out {
		out[i] = v[i*width : (i+1)*width : (i+1)*width]
	}
	return out
}

// spacesEntry returns the spaces' JSON: spaces.npy's bytes (a 1-D uint8
// array), or the raw spaces.json entry of files written before.
func spacesEntry(files map[string]*zip.File, open func(string) ([]byte, error)) ([]byte, error) {
	if files["spaces.npy"] == nil && files["spaces.json"] != nil {
		return open("spaces.json")
	}
	return u8Entry(files, "spaces.npy")
}

// u8Entry returns the bytes of the entry name, a 1-D uint8 array of at
// most 1 MiB (JSON, in this format).
func u8Entry(files map[string]*zip.File, name string) ([]byte, error) {
	r, size, err := openEntry(files, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	h, data, err := readNPY(r, min(size, 1<<20))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	case h.descr != dtypeU8 || len(h.shape) != 1:
		return nil, fmt.Errorf("%s: dtype %q shape %v, want a 1-D %q array of JSON", name, h.descr, h.shape, dtypeU8)
	}
	return data, nil
}
