package tbevent

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Read returns the scalar events of the event files in dir (those Create
// names), file by file in name order — the order of a run's sessions — and
// record by record. A damaged record is skipped and a file's torn tail
// dropped, as Trim does. A missing dir has no events.
func Read(dir string) ([]Event, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), FilePrefix) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	var events []Event
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		eachRecord(b, func(data []byte) bool {
			ev, ok := decodeEvent(data)
			if ok && len(ev.Scalars) > 0 {
				events = append(events, ev)
			}
			return true // a record that does not decode is skipped, as Trim skips it
		})
	}
	return events, nil
}

// eachRecord calls f with the data of each intact record of b, in order,
// until f returns false. A record whose data fails its checksum while its
// length passes is skipped (the records after it are found by that
// length). Reading stops at a record cut short — the torn tail a session
// killed mid-write leaves, or a tail of zeros a file system leaves after a
// crash — and at a length that fails its checksum, after which no record
// boundary can be trusted. It returns how many records it
// skipped and the offset of such a length (-1 if there is none).
func eachRecord(b []byte, f func(data []byte) bool) (skipped, lostAt int) {
	off := 0
	for len(b)-off >= 12 {
		r := b[off:]
		if binary.LittleEndian.Uint32(r[8:]) != maskedCRC(r[:8]) {
			if !slices.ContainsFunc(r, func(c byte) bool { return c != 0 }) {
				return skipped, -1 // zeros a file system left after a crash: a torn tail
			}
			return skipped, off
		}
		n, rest := binary.LittleEndian.Uint64(r), uint64(len(r)-12)
		if n > rest || rest-n < 4 {
			return skipped, -1
		}
		data := r[12 : 12+n]
		if binary.LittleEndian.Uint32(r[12+n:]) != maskedCRC(data) {
			skipped++
		} else if !f(data) {
			return skipped, -1
		}
		off += 16 + int(n)
	}
	return skipped, -1
}

// trimRecords returns the records of b to keep, how many of them are
// events with a summary (not the file_version event), and what eachRecord
// could not read: the records skipped (a record that does not parse as an
// Event counts as one) and the offset where reading stopped on damage.
func trimRecords(b []byte, maxStep int64) (out []byte, events, skipped, lostAt int) {
	unparsed := 0
	skipped, lostAt = eachRecord(b, func(data []byte) bool {
		step, hasSummary, ok := eventStep(data)
		if !ok {
			unparsed++
		}
		if ok && step <= maxStep {
			n := len(data)
			out = binary.LittleEndian.AppendUint64(out, uint64(n))
			out = binary.LittleEndian.AppendUint32(out, maskedCRC(out[len(out)-8:]))
			out = append(out, data...)
			out = binary.LittleEndian.AppendUint32(out, maskedCRC(data))
			if hasSummary {
				events++
			}
		}
		return true
	})
	return out, events, skipped + unparsed, lostAt
}

// eventStep returns an Event's step (field 2) and whether it has a summary
// (field 5); ok is false if data does not parse as protobuf.
func eventStep(data []byte) (step int64, hasSummary, ok bool) {
	ok = walk(data, func(field, wire int, v uint64, _ []byte) bool {
		switch {
		case field == 2 && wire == wireVarint:
			step = int64(v)
		case field == 5 && wire == wireBytes:
			hasSummary = true
		}
		return true
	})
	return step, hasSummary, ok
}

// decodeEvent decodes an Event's wall time, step and scalar values.
func decodeEvent(data []byte) (ev Event, ok bool) {
	ok = walk(data, func(field, wire int, v uint64, b []byte) bool {
		switch {
		case field == 1 && wire == wireFixed64:
			sec := math.Float64frombits(v)
			ev.Wall = time.Unix(0, int64(sec*1e9))
		case field == 2 && wire == wireVarint:
			ev.Step = int64(v)
		case field == 5 && wire == wireBytes:
			return walk(b, func(field, wire int, _ uint64, value []byte) bool {
				if field != 1 || wire != wireBytes {
					return true
				}
				sc, ok := decodeValue(value)
				if ok {
					ev.Scalars = append(ev.Scalars, sc)
				}
				return ok
			})
		}
		return true
	})
	return ev, ok
}

// decodeValue decodes a Summary.Value with a tag and a simple_value.
func decodeValue(b []byte) (sc Scalar, ok bool) {
	seen := 0
	ok = walk(b, func(field, wire int, v uint64, s []byte) bool {
		switch {
		case field == 1 && wire == wireBytes:
			sc.Tag, seen = string(s), seen|1
		case field == 2 && wire == wireFixed32:
			sc.Value, seen = math.Float32frombits(uint32(v)), seen|2
		}
		return true
	})
	return sc, ok && seen == 3
}

// walk calls f with each field of the protobuf message data: its number,
// wire type, the value of a varint or fixed field, the bytes of a
// length-delimited one. It returns false if data does not parse or f
// returns false.
func walk(data []byte, f func(field, wire int, v uint64, b []byte) bool) bool {
	for len(data) > 0 {
		key, k := binary.Uvarint(data)
		if k <= 0 {
			return false
		}
		data = data[k:]
		field, wire := int(key>>3), int(key&7)
		var v uint64
		var b []byte
		switch wire {
		case wireVarint:
			if v, k = binary.Uvarint(data); k <= 0 {
				return false
			}
			data = data[k:]
		case wireFixed64, wireFixed32:
			size := map[int]int{wireFixed64: 8, wireFixed32: 4}[wire]
			if len(data) < size {
				return false
			}
			if size == 8 {
				v = binary.LittleEndian.Uint64(data)
			} else {
				v = uint64(binary.LittleEndian.Uint32(data))
			}
			data = data[size:]
		case wireBytes:
			n, k := binary.Uvarint(data)
			if k <= 0 || n > uint64(len(data)-k) {
				return false
			}
			b, data = data[k:k+int(n)], data[k+int(n):]
		default:
			return false
		}
		if !f(field, wire, v, b) {
			return false
		}
	}
	return true
}
