// Package tbevent writes TensorBoard event files of scalars, with the
// standard library only, so that `tensorboard --logdir runs` can plot and
// compare runs.
//
// An event file is a sequence of records, each
//
//	uint64 length of data (little-endian)
//	uint32 masked CRC32C of those 8 length bytes
//	data (length bytes): one serialized Event protobuf
//	uint32 masked CRC32C of data
//
// where masked(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8 and CRC32C is
// CRC-32 with the Castagnoli polynomial. The first Event of a file carries
// only wall_time and file_version "brain.Event:2"; each later one wall_time,
// step and a Summary of scalar values. The protobuf fields written are
//
//	Event   { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
//	Summary { repeated Value value = 1; }
//	Value   { string tag = 1; float simple_value = 2; }
//
// encoded by hand (varints and wire types), since nothing else of protobuf
// is needed.
package tbevent

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/evolverl/evolve/internal/atomicfile"
)

// FilePrefix begins the name of every event file; TensorBoard reads the
// files whose name contains "tfevents".
const FilePrefix = "events.out.tfevents."

const fileVersion = "brain.Event:2"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskedCRC is the CRC32C of b, masked as TensorFlow's record format does
// (a CRC of data that holds CRCs is then not a CRC of them).
func maskedCRC(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return (c>>15 | c<<17) + 0xa282ead8
}

// A Scalar is one value of a summary.
type Scalar struct {
	Tag   string
	Value float32
}

// Writer appends events to one event file.
type Writer struct {
	f    *os.File
	path string
	buf  []byte
}

// Create creates dir if needed and a new event file in it, named
// events.out.tfevents.<unix seconds of now>.<host> (with ".<n>" added if
// that name is taken, so that each session of a run gets its own file,
// after the earlier ones in name order), and writes its file_version event.
// host is sanitized to letters, digits, '-', '_' and '.'; "" becomes
// "evolve".
func Create(dir string, now time.Time, host string) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	host = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, host)
	if host == "" {
		host = "evolve"
	}
	base := filepath.Join(dir, FilePrefix+strconv.FormatInt(now.Unix(), 10)+"."+host)
	path := base
	var f *os.File
	for n := 1; ; n++ {
		var err error
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) || n > 1000 {
			return nil, err
		}
		path = base + "." + strconv.Itoa(n)
	}
	w := &Writer{f: f, path: path}
	ev := appendDouble(nil, 1, wallTime(now))
	ev = appendBytes(ev, 3, []byte(fileVersion))
	if err := w.writeRecord(ev); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// Path returns the file's path.
func (w *Writer) Path() string { return w.path }

// An Event is the scalars of one step, at a wall time.
type Event struct {
	Step    int64
	Wall    time.Time
	Scalars []Scalar
}

// WriteScalars appends one event of the given step and wall time holding
// scalars, and syncs the file so that the event survives a crash.
func (w *Writer) WriteScalars(step int64, now time.Time, scalars []Scalar) error {
	return w.WriteEvents([]Event{{Step: step, Wall: now, Scalars: scalars}})
}

// WriteEvents appends events in the order given in one write, and syncs
// the file once. A crash mid-write leaves a torn last record, which Trim
// drops.
func (w *Writer) WriteEvents(events []Event) error {
	w.buf = w.buf[:0]
	for _, e := range events {
		var sum []byte
		for _, s := range e.Scalars {
			v := appendBytes(nil, 1, []byte(s.Tag))
			v = appendFixed32(v, 2, math.Float32bits(s.Value))
			sum = appendBytes(sum, 1, v)
		}
		ev := appendDouble(nil, 1, wallTime(e.Wall))
		ev = appendVarintField(ev, 2, uint64(e.Step))
		ev = appendBytes(ev, 5, sum)
		w.buf = appendRecord(w.buf, ev)
	}
	if _, err := w.f.Write(w.buf); err != nil {
		return err
	}
	return w.f.Sync()
}

// Close closes the file.
func (w *Writer) Close() error { return w.f.Close() }

func (w *Writer) writeRecord(data []byte) error {
	w.buf = appendRecord(w.buf[:0], data)
	_, err := w.f.Write(w.buf)
	return err
}

func appendRecord(b, data []byte) []byte {
	n := len(b)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(data)))
	b = binary.LittleEndian.AppendUint32(b, maskedCRC(b[n:]))
	b = append(b, data...)
	return binary.LittleEndian.AppendUint32(b, maskedCRC(data))
}

func wallTime(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

func appendTag(b []byte, field, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire))
}

func appendVarintField(b []byte, field int, v uint64) []byte {
	return binary.AppendUvarint(appendTag(b, field, wireVarint), v)
}

func appendDouble(b []byte, field int, v float64) []byte {
	return binary.LittleEndian.AppendUint64(appendTag(b, field, wireFixed64), math.Float64bits(v))
}

func appendFixed32(b []byte, field int, v uint32) []byte {
	return binary.LittleEndian.AppendUint32(appendTag(b, field, wireFixed32), v)
}

func appendBytes(b []byte, field int, v []byte) []byte {
	b = binary.AppendUvarint(appendTag(b, field, wireBytes), uint64(len(v)))
	return append(b, v...)
}

// Trim rewrites every event file in dir (atomically) without the events
// whose step is above maxStep, so that a resumed run, which repeats the
// steps after its checkpoint, records each step once. A file's
// file_version event is kept, and a file left with no other event is
// removed. A file's torn tail (a session killed mid-write) is dropped.
// Damage is not silently dropped with the history after it: a record that
// fails its checksum is left out and the rest kept, and where a damaged
// length leaves the rest of a file unreadable the whole file is first
// copied aside (its name's "tfevents" made "damaged", so that neither
// TensorBoard nor Read takes it for a log). Trim returns a note for each
// such file. A missing dir is not an error.
func Trim(dir string, maxStep int64) (notes []string, err error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), FilePrefix) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		note, err := trimFile(path, maxStep)
		if err != nil {
			return notes, fmt.Errorf("%s: %w", path, err)
		}
		if note != "" {
			notes = append(notes, note)
		}
	}
	return notes, nil
}

// trimFile is Trim of the event file path; it returns the note on damage.
func trimFile(path string, maxStep int64) (note string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	out, events, skipped, lostAt := trimRecords(b, maxStep)
	if skipped > 0 {
		note = fmt.Sprintf("%s: %d damaged record(s) left out", path, skipped)
	}
	if lostAt >= 0 {
		aside := filepath.Join(filepath.Dir(path), strings.Replace(filepath.Base(path), "tfevents", "damaged", 1))
		if err := atomicfile.WriteBytes(aside, b); err != nil {
			return "", err
		}
		kept := "kept the records before it"
		if events == 0 {
			kept = "no event before it, so the file is removed"
		}
		note = fmt.Sprintf("%s: damaged at byte %d of %d, after which no record can be read: %s; the whole file is in %s",
			path, lostAt, len(b), kept, aside)
		if skipped > 0 {
			note += fmt.Sprintf(" (and %d damaged record(s) before it left out)", skipped)
		}
	}
	switch {
	case events == 0:
		err = os.Remove(path)
	case len(out) != len(b):
		err = atomicfile.WriteBytes(path, out)
	}
	return note, err
}
