package agent

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"sort"
)

// The safetensors layout: an 8-byte little-endian header length, a JSON
// header mapping each tensor name to its dtype, shape and [begin, end) byte
// offsets into the data section (plus a "__metadata__" map of strings), then
// the raw little-endian data. Any safetensors reader can open agent files.

// maxHeaderBytes bounds the JSON header a reader will accept, so that a
// corrupt length cannot make it allocate gigabytes.
const maxHeaderBytes = 64 << 20

// namedTensor is one float32 tensor of a file.
type namedTensor struct {
	Name  string
	Shape []int
	Data  []float32
}

type headerEntry struct {
	DType   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// encodeSafetensors writes tensors (in the given order) and metadata. The
// metadata gets a "checksum" entry: the SHA-256 of the data section.
func encodeSafetensors(w io.Writer, tensors []namedTensor, meta map[string]string) error {
	header := make(map[string]any, len(tensors)+1)
	var data bytes.Buffer
	buf := make([]byte, 4)
	for _, t := range tensors {
		if _, dup := header[t.Name]; dup || t.Name == "__metadata__" || t.Name == "" {
			return fmt.Errorf("safetensors: tensor name %q is empty, reserved or repeated", t.Name)
		}
		if n := shapeSize(t.Shape); n != len(t.Data) {
			return fmt.Errorf("safetensors: tensor %q has shape %v but %d values", t.Name, t.Shape, len(t.Data))
		}
		begin := int64(data.Len())
		for _, v := range t.Data {
			binary.LittleEndian.PutUint32(buf, math.Float32bits(v))
			data.Write(buf)
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		header[t.Name] = headerEntry{DType: "F32", Shape: shape, Offsets: [2]int64{begin, int64(data.Len())}}
	}
	m := make(map[string]string, len(meta)+1)
	for k, v := range meta {
		m[k] = v
	}
	sum := sha256.Sum256(data.Bytes())
	m["checksum"] = "sha256:" + hex.EncodeToString(sum[:])
	header["__metadata__"] = m
	hj, err := json.Marshal(header)
	if err != nil {
		return fmt.Errorf("safetensors: header: %w", err)
	}
	// Pad the header with spaces so that the data starts 8-byte aligned,
	// as the format recommends.
	for len(hj)%8 != 0 {
		hj = append(hj, ' ')
	}
	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(hj)))
	for _, part := range [][]byte{lenBuf[:], hj, data.Bytes()} {
		if _, err := w.Write(part); err != nil {
			return err
		}
	}
	return nil
}

// decodeSafetensors parses a whole file held in memory. It checks the header
// length, the JSON, every dtype, shape and offset (tensors must tile the data
// section exactly) and the checksum before it allocates any tensor, and
// returns the tensors sorted by offset. It is long because the checks are
// one sequence over one header, each naming what it found; split, each part
// would need the others' state.
func decodeSafetensors(file []byte) ([]namedTensor, map[string]string, error) {
	if len(file) < 8 {
		return nil, nil, fmt.Errorf("file of %d bytes is too short for a safetensors header", len(file))
	}
	hlen := binary.LittleEndian.Uint64(file[:8])
	switch {
	case hlen > maxHeaderBytes:
		// A safetensors header is JSON: this is another kind of file.
		return nil, nil, fmt.Errorf("not a safetensors file (an agent file begins with its header's length and JSON; header length %d)", hlen)
	case hlen > uint64(len(file)-8):
		return nil, nil, fmt.Errorf("truncated: the header alone needs %d bytes, the file has %d", 8+hlen, len(file))
	}
	data := file[8+hlen:]
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(file[8:8+hlen], &raw); err != nil {
		if json.Valid(file[8 : 8+hlen]) {
			return nil, nil, fmt.Errorf("header is JSON but not an object: %w", err)
		}
		return nil, nil, fmt.Errorf("header is not valid JSON: %w", err)
	}
	meta := map[string]string{}
	if m, ok := raw["__metadata__"]; ok {
		if err := json.Unmarshal(m, &meta); err != nil {
			return nil, nil, fmt.Errorf("__metadata__ is not a map of strings: %w", err)
		}
		delete(raw, "__metadata__")
	}
	type entry struct {
		name string
		headerEntry
	}
	entries := make([]entry, 0, len(raw))
	names := slices.Sorted(maps.Keys(raw)) // the same error for the same file, every time
	for _, name := range names {
		var e headerEntry
		dec := json.NewDecoder(bytes.NewReader(raw[name]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, nil, fmt.Errorf("tensor %q: bad header entry: %w", name, err)
		}
		entries = append(entries, entry{name, e})
	}
	// A file cut short (a copy or a download that stopped) says so, rather
	// than naming whichever tensor's offsets it reached first.
	for _, e := range entries {
		if end := e.Offsets[1]; end > int64(len(data)) && e.Offsets[0] >= 0 && end >= e.Offsets[0] {
			need := end
			for _, o := range entries {
				need = max(need, o.Offsets[1])
			}
			return nil, nil, fmt.Errorf("truncated: the header describes %d bytes of tensors, the file has %d after its header", need, len(data))
		}
	}
	for _, e := range entries {
		name := e.name
		if e.DType != "F32" {
			return nil, nil, fmt.Errorf("tensor %q: dtype %q, want F32", name, e.DType)
		}
		n := int64(1)
		for _, d := range e.Shape {
			if d < 0 || (d > 0 && n > int64(len(data))/int64(d)) {
				return nil, nil, fmt.Errorf("tensor %q: shape %v is negative or larger than the file", name, e.Shape)
			}
			n *= int64(d)
		}
		if e.Offsets[0] < 0 || e.Offsets[1] < e.Offsets[0] || e.Offsets[1] > int64(len(data)) {
			return nil, nil, fmt.Errorf("tensor %q: offsets %v outside the %d data bytes", name, e.Offsets, len(data))
		}
		if e.Offsets[1]-e.Offsets[0] != 4*n {
			return nil, nil, fmt.Errorf("tensor %q: shape %v needs %d bytes, offsets %v give %d", name, e.Shape, 4*n, e.Offsets, e.Offsets[1]-e.Offsets[0])
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Offsets[0] < entries[j].Offsets[0] })
	end := int64(0)
	for _, e := range entries {
		if e.Offsets[0] != end {
			return nil, nil, fmt.Errorf("tensor %q: starts at byte %d, want %d (tensors must tile the data without gaps or overlap)", e.name, e.Offsets[0], end)
		}
		end = e.Offsets[1]
	}
	if end != int64(len(data)) {
		return nil, nil, fmt.Errorf("tensors cover %d of %d data bytes", end, len(data))
	}
	if want, ok := meta["checksum"]; ok {
		sum := sha256.Sum256(data)
		if got := "sha256:" + hex.EncodeToString(sum[:]); got != want {
			return nil, nil, fmt.Errorf("checksum mismatch: data hashes to %s, header says %s (the file is corrupt)", got, want)
		}
	}
	out := make([]namedTensor, len(entries))
	for i, e := range entries {
		vals := make([]float32, (e.Offsets[1]-e.Offsets[0])/4)
		for j := range vals {
			vals[j] = math.Float32frombits(binary.LittleEndian.Uint32(data[e.Offsets[0]+int64(4*j):]))
		}
		out[i] = namedTensor{Name: e.name, Shape: e.Shape, Data: vals}
	}
	return out, meta, nil
}

// readFileLimited reads a whole file, refusing one larger than limit bytes.
func readFileLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("file is %d bytes, more than the %d-byte limit", st.Size(), limit)
	}
	buf := make([]byte, st.Size())
	if _, err := io.ReadFull(f, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

func shapeSize(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}
