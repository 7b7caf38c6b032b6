package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// The .npy format, version 1.0: the magic "\x93NUMPY", the version bytes
// 1 and 0, the header's length as a little-endian uint16, then the header —
// a Python dict literal {'descr': …, 'fortran_order': False, 'shape': (…), }
// padded with spaces and ending in '\n' so that the data starts at a
// multiple of 64 bytes — then the array's values in C order. Version 2.0
// differs only in a uint32 header length; Read accepts both.
const npyMagic = "\x93NUMPY"

// Data types, as numpy's descr strings.
const (
	dtypeF32  = "<f4"
	dtypeF64  = "<f8"
	dtypeBool = "|b1"
	dtypeU8   = "|u1"
	dtypeI64  = "<i8"
)

// maxHeader bounds an .npy header; numpy's own are a few hundred bytes.
const maxHeader = 1 << 16

// writeNPY writes one array: data holds its values, already encoded.
func writeNPY(w io.Writer, descr string, shape []int, data []byte) error {
	dims := make([]string, len(shape))
	for i, n := range shape {
		dims[i] = strconv.Itoa(n)
	}
	tuple := "(" + strings.Join(dims, ", ") + ")"
	if len(shape) == 1 {
		tuple = "(" + dims[0] + ",)" // Python's one-element tuple
	}
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, tuple)
	pre := len(npyMagic) + 2 + 2
	pad := 64 - (pre+len(h)+1)%64
	if pad == 64 {
		pad = 0
	}
	h += strings.Repeat(" ", pad) + "\n"
	var head bytes.Buffer
	head.WriteString(npyMagic)
	head.Write([]byte{1, 0})
	binary.Write(&head, binary.LittleEndian, uint16(len(h)))
	head.WriteString(h)
	if _, err := w.Write(head.Bytes()); err != nil {
		return err
	}
	_, err := w.Write(data)
	return err
}

// npyHeader is what an .npy header declares.
type npyHeader struct {
	descr string
	shape []int
}

// readNPY reads one array of at most size bytes in all (the zip entry's
// size), and returns its header and raw values, after checking that the
// values are exactly as many as the header declares.
func readNPY(r io.Reader, size uint64) (npyHeader, []byte, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return npyHeader{}, nil, fmt.Errorf("not an .npy array: %w", err)
	}
	if string(pre[:6]) != npyMagic {
		return npyHeader{}, nil, errors.New(`not an .npy array: no "\x93NUMPY" magic`)
	}
	var n int
	switch pre[6] {
	case 1:
		var l [2]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return npyHeader{}, nil, fmt.Errorf(".npy header length: %w", err)
		}
		n = int(binary.LittleEndian.Uint16(l[:]))
	case 2, 3:
		var l [4]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return npyHeader{}, nil, fmt.Errorf(".npy header length: %w", err)
		}
		if v := binary.LittleEndian.Uint32(l[:]); v <= maxHeader {
			n = int(v)
		} else {
			return npyHeader{}, nil, fmt.Errorf(".npy header of %d bytes", v)
		}
	default:
		return npyHeader{}, nil, fmt.Errorf(".npy version %d.%d is not supported", pre[6], pre[7])
	}
	raw := make([]byte, n)
	if _, err := io.ReadFull(r, raw); err != nil {
		return npyHeader{}, nil, fmt.Errorf(".npy header: %w", err)
	}
	h, err := parseHeader(string(raw))
	if err != nil {
		return npyHeader{}, nil, fmt.Errorf(".npy header %q: %w", strings.TrimSpace(string(raw)), err)
	}
	item := map[string]uint64{dtypeF32: 4, dtypeF64: 8, dtypeBool: 1, dtypeU8: 1, dtypeI64: 8}[h.descr]
	if item == 0 {
		return h, nil, nil // the caller names the dtype it wants
	}
	want := item
	for _, d := range h.shape {
		if d > 0 && want > size/uint64(d) {
			return h, nil, fmt.Errorf("shape %v holds more values than the entry's %d bytes", h.shape, size)
		}
		want *= uint64(d)
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(want)+1))
	if err != nil {
		return h, nil, fmt.Errorf("values: %w", err)
	}
	if uint64(len(data)) != want {
		return h, nil, fmt.Errorf("shape %v of %s needs %d bytes of values, the entry holds %d", h.shape, h.descr, want, len(data))
	}
	return h, data, nil
}

// parseHeader reads the dict literal of an .npy header: the keys descr,
// fortran_order (which must be False) and shape, in any order.
func parseHeader(s string) (npyHeader, error) {
	p := &pyParser{s: strings.TrimSpace(s)}
	var h npyHeader
	seen := map[string]bool{}
	if !p.take('{') {
		return h, errors.New("not a dict")
	}
	for !p.take('}') {
		key, err := p.str()
		if err != nil {
			return h, err
		}
		if seen[key] {
			return h, fmt.Errorf("key %q twice", key)
		}
		seen[key] = true
		if !p.take(':') {
			return h, fmt.Errorf("no ':' after %q", key)
		}
		switch key {
		case "descr":
			if h.descr, err = p.str(); err != nil {
				return h, fmt.Errorf("descr: %w", err)
			}
		case "fortran_order":
			switch {
			case p.word("False"):
			case p.word("True"):
				return h, errors.New("fortran_order is True; only C-order arrays are read")
			default:
				return h, errors.New("fortran_order is neither True nor False")
			}
		case "shape":
			if h.shape, err = p.tuple(); err != nil {
				return h, fmt.Errorf("shape: %w", err)
			}
		default:
			return h, fmt.Errorf("unknown key %q", key)
		}
		if !p.take(',') && !p.peek('}') {
			return h, fmt.Errorf("no ',' after %q", key)
		}
	}
	if p.rest() != "" {
		return h, errors.New("text after the dict")
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return h, fmt.Errorf("no %q", k)
		}
	}
	return h, nil
}

// pyParser reads the few Python literals an .npy header holds.
type pyParser struct {
	s string
	i int
}

func (p *pyParser) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *pyParser) peek(c byte) bool { p.skip(); return p.i < len(p.s) && p.s[p.i] == c }

func (p *pyParser) take(c byte) bool {
	if p.peek(c) {
		p.i++
		return true
	}
	return false
}

func (p *pyParser) rest() string { return strings.TrimSpace(p.s[p.i:]) }

func (p *pyParser) word(w string) bool {
	p.skip()
	if strings.HasPrefix(p.s[p.i:], w) {
		p.i += len(w)
		return true
	}
	return false
}

// str reads a quoted string without escapes.
func (p *pyParser) str() (string, error) {
	p.skip()
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", errors.New("want a quoted string")
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", errors.New("unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+end]
	p.i += end + 2
	return v, nil
}

// tuple reads a tuple of non-negative integers: (), (3,), (3, 4).
func (p *pyParser) tuple() ([]int, error) {
	if !p.take('(') {
		return nil, errors.New("want a tuple")
	}
	shape := []int{}
	for !p.take(')') {
		p.skip()
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		d, err := strconv.Atoi(p.s[p.i:j])
		if err != nil || d > math.MaxInt32 {
			return nil, fmt.Errorf("dimension %q", p.s[p.i:j])
		}
		p.i = j
		shape = append(shape, d)
		if !p.take(',') && !p.peek(')') {
			return nil, errors.New("want ',' or ')'")
		}
	}
	return shape, nil
}

func encodeF32(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func encodeF64(v []float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

func encodeBool(v []bool) []byte {
	b := make([]byte, len(v))
	for i, x := range v {
		if x {
			b[i] = 1
		}
	}
	return b
}

func decodeF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func decodeF64(b []byte) []float64 {
	v := make([]float64, len(b)/8)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v
}

// decodeBool refuses bytes other than 0 and 1, which numpy never writes.
func decodeBool(b []byte) ([]bool, error) {
	v := make([]bool, len(b))
	for i, x := range b {
		switch x {
		case 0:
		case 1:
			v[i] = true
		default:
			return nil, fmt.Errorf("value %d is byte %d, not a bool", i, x)
		}
	}
	return v, nil
}
