package tbevent

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCRC32CCheckValue pins the polynomial: CRC-32C of "123456789" is
// 0xe3069283 (the catalogue's check value), and the mask is TensorFlow's.
func TestCRC32CCheckValue(t *testing.T) {
	c := crc32.Checksum([]byte("123456789"), castagnoli)
	if c != 0xe3069283 {
		t.Fatalf("crc32c = %#x, want 0xe3069283", c)
	}
	if got, want := maskedCRC([]byte("123456789")), (c>>15|c<<17)+0xa282ead8; got != want {
		t.Fatalf("masked = %#x, want %#x", got, want)
	}
}

// TestEventBytes compares one scalar event with bytes encoded by hand from
// the protobuf wire format.
func TestEventBytes(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(2, 500_000_000) // wall_time 2.5 = 0x4004000000000000
	w, err := Create(dir, now, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteScalars(300, now, []Scalar{{"a/b", 1}}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if want := filepath.Join(dir, "events.out.tfevents.2.evolve"); w.Path() != want {
		t.Fatalf("path %s, want %s", w.Path(), want)
	}
	wall := []byte{0x09, 0, 0, 0, 0, 0, 0, 0x04, 0x40}
	version := append(append([]byte{}, wall...), 0x1a, 13)
	version = append(version, "brain.Event:2"...)
	value := []byte{0x0a, 3, 'a', '/', 'b', 0x15, 0, 0, 0x80, 0x3f} // tag, simple_value 1.0f
	scalar := append(append([]byte{}, wall...),
		0x10, 0xac, 0x02, // step 300 as a varint
		0x2a, byte(2+len(value)), 0x0a, byte(len(value))) // summary { value { … } }
	scalar = append(scalar, value...)
	var want []byte
	for _, data := range [][]byte{version, scalar} {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(data)))
		want = append(want, n[:]...)
		want = binary.LittleEndian.AppendUint32(want, maskedCRC(n[:]))
		want = append(want, data...)
		want = binary.LittleEndian.AppendUint32(want, maskedCRC(data))
	}
	got, err := os.ReadFile(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("file\n%x\nwant\n%x", got, want)
	}
}

func TestCreateNeverReusesAName(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1700000000, 0)
	var names []string
	for range 3 {
		w, err := Create(dir, now, "my/host")
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		names = append(names, filepath.Base(w.Path()))
	}
	want := []string{"events.out.tfevents.1700000000.my_host", "events.out.tfevents.1700000000.my_host.1",
		"events.out.tfevents.1700000000.my_host.2"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("names %v, want %v", names, want)
	}
}

// steps lists the steps of the summary events of the file at path.
func steps(t *testing.T, path string) []int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for len(b) > 0 {
		n := binary.LittleEndian.Uint64(b)
		step, hasSummary, ok := eventStep(b[12 : 12+n])
		if !ok {
			t.Fatal("unparsable event")
		}
		if hasSummary {
			out = append(out, step)
		}
		b = b[16+n:]
	}
	return out
}

func TestTrimDropsLaterStepsTornTailsAndEmptyFiles(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(10, 0)
	w, err := Create(dir, now, "h")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []int64{100, 200, 300, 400} {
		if err := w.WriteScalars(s, now, []Scalar{{"x", float32(s)}, {"y", math.MaxFloat32}}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	torn, err := Create(dir, now, "h") // a second session killed mid-record
	if err != nil {
		t.Fatal(err)
	}
	torn.WriteScalars(500, now, []Scalar{{"x", 5}})
	torn.Close()
	b, _ := os.ReadFile(torn.Path())
	os.WriteFile(torn.Path(), b[:len(b)-3], 0o644)
	empty, err := Create(dir, now, "h") // a session that finished no step
	if err != nil {
		t.Fatal(err)
	}
	empty.Close()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("kept"), 0o644)

	if notes, err := Trim(dir, 250); err != nil || len(notes) > 0 {
		t.Fatalf("Trim: %v, notes %q: want none (a torn tail is no damage)", err, notes)
	}
	if got := steps(t, w.Path()); len(got) != 2 || got[0] != 100 || got[1] != 200 {
		t.Fatalf("steps after Trim(250): %v, want [100 200]", got)
	}
	for _, p := range []string{torn.Path(), empty.Path()} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s: still there after Trim (%v), want removed: no event left", filepath.Base(p), err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Errorf("Trim touched a file that is not an event file: %v", err)
	}
	if _, err := Trim(filepath.Join(dir, "missing"), 0); err != nil {
		t.Errorf("Trim of a missing dir: %v", err)
	}
}

// recordOffsets returns the offset of each record of the event file b.
func recordOffsets(b []byte) []int {
	var offs []int
	for off := 0; off+12 <= len(b); off += 16 + int(binary.LittleEndian.Uint64(b[off:])) {
		offs = append(offs, off)
	}
	return offs
}

// TestTrimKeepsTheHistoryPastDamage: one damaged byte in a file of a run's
// earlier session lost every event after it (Trim rewrote the file without
// them, silently). A record whose data is damaged is now left out alone; a
// damaged length, after which no record can be found, keeps the events
// before it and a copy of the whole file aside, with a note either way. A
// torn tail of 12 to 15 bytes (a whole length, part of the data) is no
// damage, and no longer reads past the end of the file.
func TestTrimKeepsTheHistoryPastDamage(t *testing.T) {
	now := time.Unix(10, 0)
	write := func(t *testing.T) (dir, path string, b []byte, offs []int) {
		dir = t.TempDir()
		w, err := Create(dir, now, "h")
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []int64{100, 200, 300, 400, 500} {
			if err := w.WriteScalars(s, now, []Scalar{{"x", float32(s)}}); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		b, err = os.ReadFile(w.Path())
		if err != nil {
			t.Fatal(err)
		}
		return dir, w.Path(), b, recordOffsets(b) // offs[0]: file_version; offs[i]: step 100·i
	}
	trim := func(t *testing.T, dir string, b []byte, path string) []string {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		notes, err := Trim(dir, 1000)
		if err != nil {
			t.Fatal(err)
		}
		return notes
	}

	t.Run("data", func(t *testing.T) {
		dir, path, b, offs := write(t)
		b[offs[2]+14] ^= 0x40 // in step 200's data
		notes := trim(t, dir, b, path)
		if got := steps(t, path); !slices.Equal(got, []int64{100, 300, 400, 500}) {
			t.Errorf("steps after Trim: %v, want [100 300 400 500]", got)
		}
		if len(notes) != 1 || !strings.Contains(notes[0], "1 damaged record") {
			t.Errorf("notes %q, want one saying 1 damaged record was left out", notes)
		}
	})
	t.Run("length", func(t *testing.T) {
		dir, path, b, offs := write(t)
		whole := slices.Clone(b)
		b[offs[3]+1] ^= 0x01 // step 300's length
		notes := trim(t, dir, b, path)
		if got := steps(t, path); !slices.Equal(got, []int64{100, 200}) {
			t.Errorf("steps after Trim: %v, want [100 200]", got)
		}
		aside := filepath.Join(dir, strings.Replace(filepath.Base(path), "tfevents", "damaged", 1))
		if got, err := os.ReadFile(aside); err != nil || len(got) != len(whole) || slices.Equal(got, whole) {
			t.Errorf("the file set aside: %v (%d bytes), want the damaged file whole (%d bytes)", err, len(got), len(whole))
		}
		if len(notes) != 1 || !strings.Contains(notes[0], aside) {
			t.Errorf("notes %q, want one naming %s", notes, aside)
		}
		evs, err := Read(dir)
		if err != nil || len(evs) != 2 {
			t.Errorf("Read after Trim: %d events, %v: want the 2 kept (the copy aside is no log)", len(evs), err)
		}
	})
	t.Run("torn", func(t *testing.T) {
		for k := 12; k < 16; k++ {
			dir, path, b, offs := write(t)
			if notes := trim(t, dir, b[:offs[5]+k], path); len(notes) > 0 {
				t.Errorf("a tail of %d bytes: notes %q, want none", k, notes)
			}
			if got := steps(t, path); !slices.Equal(got, []int64{100, 200, 300, 400}) {
				t.Errorf("a tail of %d bytes: steps %v, want [100 200 300 400]", k, got)
			}
		}
		// Zeros after the last record (a file system's after a crash) are a
		// torn tail, not damage to set the file aside for.
		dir, path, b, _ := write(t)
		if notes := trim(t, dir, append(b, make([]byte, 64)...), path); len(notes) > 0 {
			t.Errorf("a tail of zeros: notes %q, want none", notes)
		}
		if got := steps(t, path); !slices.Equal(got, []int64{100, 200, 300, 400, 500}) {
			t.Errorf("a tail of zeros: steps %v, want all five", got)
		}
	})
}

// TestWriteEventsSameBytesAsOneByOne: events written together are the
// records WriteScalars writes one at a time, in the order given.
func TestWriteEventsSameBytesAsOneByOne(t *testing.T) {
	now := time.Unix(100, 0)
	evs := []Event{
		{Step: 10, Wall: now, Scalars: []Scalar{{"a", 1}, {"b", 2}}},
		{Step: 20, Wall: now.Add(time.Second), Scalars: []Scalar{{"a", 3}}},
		{Step: 30, Wall: now.Add(2 * time.Second), Scalars: nil},
	}
	together, err := Create(t.TempDir(), now, "h")
	if err != nil {
		t.Fatal(err)
	}
	if err := together.WriteEvents(evs); err != nil {
		t.Fatal(err)
	}
	together.Close()
	single, err := Create(t.TempDir(), now, "h")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if err := single.WriteScalars(e.Step, e.Wall, e.Scalars); err != nil {
			t.Fatal(err)
		}
	}
	single.Close()
	a, _ := os.ReadFile(together.Path())
	b, _ := os.ReadFile(single.Path())
	if !bytes.Equal(a, b) {
		t.Fatalf("WriteEvents wrote\n%x\nWriteScalars one by one\n%x", a, b)
	}
	if got := steps(t, together.Path()); len(got) != 3 || got[0] != 10 || got[2] != 30 {
		t.Fatalf("steps %v, want [10 20 30]", got)
	}
}

// TestReadIsWhatWasWritten: Read gives back every scalar event of every
// file in order, and stops a file at a torn record as Trim does.
func TestReadIsWhatWasWritten(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Unix(1_700_000_000, 250_000_000)
	var want []Event
	for f := range 2 {
		w, err := Create(dir, t0.Add(time.Duration(f)*time.Second), "host")
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			ev := Event{Step: int64(10*f + i), Wall: t0.Add(time.Duration(i) * time.Millisecond),
				Scalars: []Scalar{{"a/x", float32(i) + 0.5}, {"b", float32(-f)}}}
			if err := w.WriteEvents([]Event{ev}); err != nil {
				t.Fatal(err)
			}
			want = append(want, ev)
		}
		path := w.Path()
		w.Close()
		if f == 1 { // a torn tail: half of one more record
			b, _ := os.ReadFile(path)
			os.WriteFile(path, append(b, 1, 2, 3, 4, 5, 6, 7), 0o644)
		}
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Step != w.Step || !slices.Equal(g.Scalars, w.Scalars) || g.Wall.Sub(w.Wall).Abs() > time.Microsecond {
			t.Errorf("event %d: %+v, want %+v", i, g, w)
		}
	}
	if evs, err := Read(filepath.Join(dir, "none")); err != nil || evs != nil {
		t.Errorf("Read of a missing dir: %v, %v", evs, err)
	}
}
