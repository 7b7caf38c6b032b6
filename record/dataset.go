package record

import (
	"archive/zip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/evolverl/evolve/envs"
)

// A dataset is a recording of many agents (evolve sample writes one): the
// arrays of a recording, and for every step where it came from, in five
// more arrays of N rows —
//
//	agent               [N]  int64 ('<i8'), the agent's index in its run
//	generation          [N]  int64, the generation of the checkpoint it was read from
//	fitness             [N]  float64, the agent's fitness recorded there (NaN: none yet)
//	episode             [N]  int64, the episode's number in the dataset, from 0
//	behavior_log_probs  [N]  float32, log-probability (density for a Box) of the
//	                          action under the distribution it was sampled from
//	                          (NaN where that has none, as a greedy Box action)
//
// — and dataset.npy, a uint8 array of UTF-8 JSON saying how the dataset was
// made (its producer's settings; Read keeps it as it is). log_probs stays
// the agent's own log π(action | observation), as in a recording.
//
// Source says where a dataset's step came from: its fields are those five
// arrays' entries (Agent, Generation, Fitness, Episode, BehaviorLogProb).
type Source struct {
	Agent, Generation, Episode int
	Fitness                    float64 // NaN: none recorded yet
	BehaviorLogProb            float32 // NaN where the behaviour has no log-probability
}

// CreateDataset returns a Writer of a dataset to path: every step added
// must carry its Source, and info (marshalled to JSON) is written as
// dataset.npy.
func CreateDataset(path string, obs, act envs.Space, info any) (*Writer, error) {
	w, err := Create(path, obs, act)
	if err != nil {
		return nil, err
	}
	if w.dataset, err = json.Marshal(info); err != nil {
		return nil, fmt.Errorf("record %s: dataset info: %w", path, err)
	}
	w.t.Sources = []Source{}
	return w, nil
}

// datasetEntries are the arrays of a dataset's sources, encoded.
func datasetEntries(s []Source) []npzEntry {
	n := len(s)
	agent, gen, ep := make([]int64, n), make([]int64, n), make([]int64, n)
	fit, blp := make([]float64, n), make([]float32, n)
	for i, x := range s {
		agent[i], gen[i], ep[i] = int64(x.Agent), int64(x.Generation), int64(x.Episode)
		fit[i], blp[i] = x.Fitness, x.BehaviorLogProb
	}
	return []npzEntry{
		{"agent", dtypeI64, []int{n}, encodeI64(agent)},
		{"generation", dtypeI64, []int{n}, encodeI64(gen)},
		{"fitness", dtypeF64, []int{n}, encodeF64(fit)},
		{"episode", dtypeI64, []int{n}, encodeI64(ep)},
		{"behavior_log_probs", dtypeF32, []int{n}, encodeF32(blp)},
	}
}

// readSources reads a dataset's source arrays and dataset.npy into t, or
// nothing when the file has no dataset.npy (a recording). array reads one
// entry of the steps' length, checked as read checks the others.
func readSources(t *Trajectory, files map[string]*zip.File, array func(name, descr string, width int) ([]byte, error)) error {
	if files["dataset.npy"] == nil {
		return nil
	}
	info, err := u8Entry(files, "dataset.npy")
	if err != nil {
		return err
	}
	if !json.Valid(info) {
		return errors.New("dataset.npy: not JSON")
	}
	t.Dataset = info
	ints := map[string][]int64{}
	for _, name := range []string{"agent", "generation", "episode"} {
		b, err := array(name, dtypeI64, 0)
		if err != nil {
			return err
		}
		ints[name] = decodeI64(b)
	}
	b, err := array("fitness", dtypeF64, 0)
	if err != nil {
		return err
	}
	fit := decodeF64(b)
	if b, err = array("behavior_log_probs", dtypeF32, 0); err != nil {
		return err
	}
	blp := decodeF32(b)
	t.Sources = make([]Source, len(fit))
	for i := range t.Sources {
		for _, name := range []string{"agent", "generation", "episode"} {
			if v := ints[name][i]; v < 0 || v > math.MaxInt32 {
				return fmt.Errorf("%s.npy: value %d is %d, want 0 … %d", name, i, v, math.MaxInt32)
			}
		}
		t.Sources[i] = Source{Agent: int(ints["agent"][i]), Generation: int(ints["generation"][i]),
			Episode: int(ints["episode"][i]), Fitness: fit[i], BehaviorLogProb: blp[i]}
	}
	return nil
}

func encodeI64(v []int64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return b
}

func decodeI64(b []byte) []int64 {
	v := make([]int64, len(b)/8)
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v
}
