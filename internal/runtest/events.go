package runtest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The TensorBoard event reader below is written from the record and
// protobuf formats, not from internal/tbevent, so that the two check each
// other.

// tbEvent is one decoded Event record.
type tbEvent struct {
	wall        float64
	step        int64
	fileVersion string
	values      map[string]float32 // summary.value: tag → simple_value
}

// pbField is one protobuf field: its number, wire type and payload (the
// value of a varint, the bits of a fixed64/fixed32, the bytes of a
// length-delimited field).
type pbField struct {
	num, wire int
	u         uint64
	b         []byte
}

func pbFields(b []byte) ([]pbField, error) {
	var out []pbField
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, errors.New("bad key varint")
		}
		b = b[n:]
		f := pbField{num: int(key >> 3), wire: int(key & 7)}
		switch f.wire {
		case 0:
			f.u, n = binary.Uvarint(b)
			if n <= 0 {
				return nil, errors.New("bad varint")
			}
			b = b[n:]
		case 1:
			if len(b) < 8 {
				return nil, errors.New("short fixed64")
			}
			f.u, b = binary.LittleEndian.Uint64(b), b[8:]
		case 5:
			if len(b) < 4 {
				return nil, errors.New("short fixed32")
			}
			f.u, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return nil, errors.New("bad length")
			}
			f.b, b = b[n:n+int(l)], b[n+int(l):]
		default:
			return nil, fmt.Errorf("wire type %d", f.wire)
		}
		out = append(out, f)
	}
	return out, nil
}

func decodeEvent(data []byte) (tbEvent, error) {
	ev := tbEvent{values: map[string]float32{}}
	fields, err := pbFields(data)
	if err != nil {
		return ev, err
	}
	for _, f := range fields {
		switch {
		case f.num == 1 && f.wire == 1:
			ev.wall = math.Float64frombits(f.u)
		case f.num == 2 && f.wire == 0:
			ev.step = int64(f.u)
		case f.num == 3 && f.wire == 2:
			ev.fileVersion = string(f.b)
		case f.num == 5 && f.wire == 2:
			values, err := pbFields(f.b)
			if err != nil {
				return ev, err
			}
			for _, v := range values {
				if v.num != 1 || v.wire != 2 {
					return ev, fmt.Errorf("summary field %d wire %d", v.num, v.wire)
				}
				vf, err := pbFields(v.b)
				if err != nil {
					return ev, err
				}
				tag, val, seen := "", float32(0), 0
				for _, x := range vf {
					switch {
					case x.num == 1 && x.wire == 2:
						tag, seen = string(x.b), seen|1
					case x.num == 2 && x.wire == 5:
						val, seen = math.Float32frombits(uint32(x.u)), seen|2
					}
				}
				if seen != 3 {
					return ev, errors.New("value without tag or simple_value")
				}
				if _, dup := ev.values[tag]; dup {
					return ev, fmt.Errorf("tag %s twice in one event", tag)
				}
				ev.values[tag] = val
			}
		default:
			return ev, fmt.Errorf("unexpected field %d wire %d", f.num, f.wire)
		}
	}
	return ev, nil
}

// readEventFile parses every record of an event file, checking both masked
// CRC32Cs of each.
func readEventFile(t testing.TB, path string) []tbEvent {
	t.Helper()
	b := ReadFile(t, path)
	mask := func(p []byte) uint32 {
		c := crc32.Checksum(p, crc32.MakeTable(crc32.Castagnoli))
		return ((c >> 15) | (c << 17)) + 0xa282ead8
	}
	var out []tbEvent
	for off := 0; off < len(b); {
		if len(b)-off < 12 {
			t.Fatalf("%s: %d bytes left at %d, less than a record header", path, len(b)-off, off)
		}
		n := int(binary.LittleEndian.Uint64(b[off:]))
		if got := binary.LittleEndian.Uint32(b[off+8:]); got != mask(b[off:off+8]) {
			t.Fatalf("%s: record at %d: length CRC %#x, want %#x", path, off, got, mask(b[off:off+8]))
		}
		if len(b)-off-16 < n {
			t.Fatalf("%s: record at %d: length %d runs past the end", path, off, n)
		}
		data := b[off+12 : off+12+n]
		if got := binary.LittleEndian.Uint32(b[off+12+n:]); got != mask(data) {
			t.Fatalf("%s: record at %d: data CRC %#x, want %#x", path, off, got, mask(data))
		}
		ev, err := decodeEvent(data)
		if err != nil {
			t.Fatalf("%s: record at %d: %v", path, off, err)
		}
		out = append(out, ev)
		off += 16 + n
	}
	return out
}

// A Point is one scalar of a run: a tag at a step.
type Point struct {
	Tag  string
	Step int64
}

// Events reads the event files of the run in dir's tb/ (in name order, as
// TensorBoard does), checking every record's CRCs, each file's
// file_version event and that steps grow from event to event within a
// file. It returns each scalar's value and how often each (tag, step)
// occurs.
func Events(t testing.TB, dir string) (map[Point]float32, map[Point]int) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "tb"))
	if err != nil {
		t.Fatal(err)
	}
	values, count := map[Point]float32{}, map[Point]int{}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "events.out.tfevents.") {
			t.Fatalf("tb/%s: not an event file", e.Name())
		}
		evs := readEventFile(t, filepath.Join(dir, "tb", e.Name()))
		if len(evs) == 0 || evs[0].fileVersion != "brain.Event:2" || evs[0].wall <= 0 {
			t.Fatalf("tb/%s: first event %+v, want file_version brain.Event:2 and a wall time", e.Name(), evs[0])
		}
		last := int64(-1)
		for _, ev := range evs[1:] {
			if ev.step <= last || ev.wall <= 0 {
				t.Fatalf("tb/%s: step %d (wall %v) after step %d", e.Name(), ev.step, ev.wall, last)
			}
			last = ev.step
			for tag, v := range ev.values {
				p := Point{tag, ev.step}
				values[p] = v
				count[p]++
			}
		}
	}
	return values, count
}

// Tags returns the distinct tags of points.
func Tags[V any](points map[Point]V) map[string]bool {
	tags := map[string]bool{}
	for p := range points {
		tags[p.Tag] = true
	}
	return tags
}

// SameEvents fails unless the runs in dirs want and got wrote every
// scalar once, the same (tag, step)s and the same values, but for
// steps_per_s, which is measured.
func SameEvents(t testing.TB, want, got string) {
	t.Helper()
	wantV, wantN := Events(t, want)
	gotV, gotN := Events(t, got)
	for p, n := range wantN {
		if n != 1 {
			t.Errorf("%s at step %d: %d times in %s, want once", p.Tag, p.Step, n, want)
		}
	}
	for p, n := range gotN {
		if n != 1 {
			t.Errorf("%s at step %d: %d times in %s, want once", p.Tag, p.Step, n, got)
		}
		if wantN[p] == 0 {
			t.Errorf("%s at step %d: only in %s", p.Tag, p.Step, got)
		}
	}
	for p := range wantN {
		switch {
		case gotN[p] == 0:
			t.Errorf("%s at step %d: missing from %s", p.Tag, p.Step, got)
		case p.Tag != "steps_per_s" && gotV[p] != wantV[p]:
			t.Errorf("%s at step %d: %v in %s, %v in %s", p.Tag, p.Step, gotV[p], got, wantV[p], want)
		}
	}
}
