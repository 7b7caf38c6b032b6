package agent

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
)

func sampleFile(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	err := encodeSafetensors(&buf, []namedTensor{
		{Name: "actor.0.weight", Shape: []int{2, 3}, Data: []float32{1, 2, 3, 4, 5, 6}},
		{Name: "actor.0.bias", Shape: []int{2}, Data: []float32{-1, 0.5}},
		{Name: "log_std", Shape: []int{}, Data: []float32{-0.5}},
	}, map[string]string{"format": "evolve-agent"})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestSafetensorsRoundTrip(t *testing.T) {
	file := sampleFile(t)
	if hl := binary.LittleEndian.Uint64(file); (8+hl)%8 != 0 {
		t.Errorf("data section starts at %d, not 8-byte aligned", 8+hl)
	}
	tensors, meta, err := decodeSafetensors(file)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, x := range tensors {
		names = append(names, x.Name)
	}
	if !reflect.DeepEqual(names, []string{"actor.0.weight", "actor.0.bias", "log_std"}) {
		t.Fatalf("tensors in order %v", names)
	}
	if !reflect.DeepEqual(tensors[0].Data, []float32{1, 2, 3, 4, 5, 6}) || !reflect.DeepEqual(tensors[0].Shape, []int{2, 3}) {
		t.Fatalf("tensor 0 = %+v", tensors[0])
	}
	if meta["format"] != "evolve-agent" || !strings.HasPrefix(meta["checksum"], "sha256:") {
		t.Fatalf("metadata %v", meta)
	}
}

func TestSafetensorsRejectsCorruptFiles(t *testing.T) {
	good := sampleFile(t)
	hl := int(binary.LittleEndian.Uint64(good))
	mutate := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	replaceHeader := func(old, new string) []byte {
		return mutate(func(b []byte) []byte {
			h := strings.Replace(string(b[8:8+hl]), old, new, 1)
			if len(h) != hl {
				t.Fatalf("replacement changes header length")
			}
			copy(b[8:], h)
			return b
		})
	}
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "too short"},
		{"huge header length", mutate(func(b []byte) []byte { binary.LittleEndian.PutUint64(b, 1<<62); return b }), "header length"},
		{"truncated", good[:len(good)-4], "truncated: the header describes 36 bytes of tensors, the file has 32"},
		{"extra bytes", append(append([]byte(nil), good...), 0, 0, 0, 0), "cover 36 of 40"},
		{"flipped data bit", mutate(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), "checksum mismatch"},
		{"bad json", mutate(func(b []byte) []byte { b[8] = 'x'; return b }), "not valid JSON"},
		{"wrong dtype", replaceHeader(`"F32"`, `"F64"`), "dtype"},
		{"wrong shape", replaceHeader(`[2,3]`, `[3,3]`), "needs 36 bytes"},
	}
	for _, tt := range tests {
		_, _, err := decodeSafetensors(tt.file)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tt.name, err, tt.want)
		}
	}
}

// FuzzDecodeSafetensors feeds mutations of a valid file to the decoder: it
// must return an error or tensors, never panic, and never allocate tensors
// larger than the file.
func FuzzDecodeSafetensors(f *testing.F) {
	f.Add(sampleFile(f))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, file []byte) {
		tensors, _, err := decodeSafetensors(file)
		if err != nil {
			return
		}
		total := 0
		for _, x := range tensors {
			total += 4 * len(x.Data)
		}
		if total > len(file) {
			t.Fatalf("decoded %d bytes of tensors from a %d-byte file", total, len(file))
		}
	})
}
