package envs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"syscall"
	"time"
)

// The protocol between a GymEnv and its Python child (gymbridge.py).
//
// Every message either way is a frame: a uint32 length, then that many
// bytes, of which the first is a tag. The parent first sends the JSON
// configuration; the child answers 'H' with the JSON descriptions of both
// spaces, or 'E' with a traceback. Then the parent sends
//
//	'R' u32 env, i64 seed (negative: None)    reset one env
//	'S' u32 env, the action's float32 values  step one env
//	'A' n × i64 seed                          reset every env
//	'V' n actions' float32 values             step every env, auto-reset
//	'P' u32 env                               render one env (an 'I' answer)
//	'C'                                       exit (as does the end of stdin)
//
// and the child answers 'O' with the outcome of every env addressed, by
// column (see decode): rewards, flags, observations, masks, and for the
// envs a 'V' step reset, the next episode's first observations and masks.
// 'I' carries a rendered frame: uint32 height, width and channels (3 or 4),
// then the pixels as bytes, row by row (0×0 when the env returns none).
// A Python exception answers 'E' with the uint32 index of the env that
// raised and the traceback. All numbers are little endian.

// gymResult is what one env returned; next holds the first observation
// of the following episode when a vector step reset the env.
type gymResult struct {
	reward      float64
	term, trunc bool
	reset       bool // next is set
	now, next   gymObs
}

// gymObs is an observation and the mask that came with it.
type gymObs struct {
	obs     []float32
	mask    []bool
	hasMask bool
}

func (o *gymObs) info() Info {
	if o.hasMask {
		return Info{ActionMask: o.mask}
	}
	return Info{}
}

// seedFor returns the seed to send for env i: NoSeed on a never-seeded
// env becomes 0, as for every env here, and other seeds go through
// GymSeed.
func (h *gymHost) seedFor(i int, seed int64) int64 {
	if seed < 0 && !h.seeded[i] {
		seed = 0
	}
	h.seeded[i] = true
	if seed < 0 {
		return -1
	}
	return GymSeed(seed)
}

// resetAll resets every env, env i with seeds[i], in one exchange.
func (h *gymHost) resetAll(seeds []int64) error {
	f := h.begin('A')
	for i, s := range seeds {
		f = binary.LittleEndian.AppendUint64(f, uint64(h.seedFor(i, s)))
	}
	h.frame = f
	return h.exchange(f, 0, len(seeds), false)
}

// stepAll steps every env in one exchange; the child resets the envs whose
// episode ended and returns their next first observation too.
func (h *gymHost) stepAll(actions []float32) error {
	h.frame = appendFloats(h.begin('V'), actions)
	return h.exchange(h.frame, 0, len(h.res), true)
}

func appendFloats(f []byte, x []float32) []byte {
	for _, a := range x {
		f = binary.LittleEndian.AppendUint32(f, math.Float32bits(a))
	}
	return f
}

// gymEnvError is a Python exception raised by one env of a child.
type gymEnvError struct {
	env       int
	traceback string
	hint      string // added to the first line
}

// keyboardInterrupt reports whether the exception is Python's
// KeyboardInterrupt, what a SIGINT raises.
func (e *gymEnvError) keyboardInterrupt() bool {
	lines := strings.Split(strings.TrimRight(e.traceback, "\n"), "\n")
	return strings.HasPrefix(strings.TrimSpace(lines[len(lines)-1]), "KeyboardInterrupt")
}

// Error puts the exception's own line (type and message) first, then the
// end of the traceback. The bridge's own checks of what the env gave
// (gymbridge.py's ValueErrors "envs gym bridge: ...") are said alone: their
// traceback would show the bridge, not the env.
func (e *gymEnvError) Error() string {
	lines := strings.Split(strings.TrimRight(e.traceback, "\n"), "\n")
	cause := strings.TrimSpace(lines[len(lines)-1])
	if own, ok := strings.CutPrefix(cause, "ValueError: envs gym bridge: "); ok {
		return "envs gym bridge: " + own + e.hint
	}
	lines = lines[max(0, len(lines)-12) : len(lines)-1]
	msg := "python exception: " + cause + e.hint
	if len(lines) > 0 {
		if !strings.HasPrefix(lines[0], "Traceback") {
			msg += "\n  ..."
		}
		msg += "\n" + strings.Join(lines, "\n")
	}
	return msg
}

// exchange sends a request about n envs, starting at env first, and
// decodes the answer into h.res.
func (h *gymHost) exchange(req []byte, first, n int, vector bool) error {
	body, err := h.call(req)
	if err != nil {
		return err
	}
	if err := h.decode(body, h.res[first:first+n], vector); err != nil {
		return h.fail(fmt.Errorf("bad answer: %w", err))
	}
	return nil
}

// decode reads an answer about len(res) envs. Its layout is by column:
// the rewards (float64), the flags (uint8), the observations (float32),
// the masks of the envs with gymMask (one byte per entry), then for the
// envs with gymReset the next episode's first observations and the masks
// of those with gymNextMask.
func (h *gymHost) decode(b []byte, res []gymResult, vector bool) error {
	n, obsBytes := len(res), 4*h.obsSize
	if len(b) < n*(9+obsBytes) {
		return fmt.Errorf("%d bytes for %d envs, want at least %d", len(b), n, n*(9+obsBytes))
	}
	flags := b[8*n : 9*n]
	var masks, resets int
	for i, f := range flags {
		r := &res[i]
		r.reward = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		r.term, r.trunc, r.reset = f&gymTerminated != 0, f&gymTruncated != 0, f&gymReset != 0
		r.now.hasMask, r.next.hasMask = f&gymMask != 0, f&gymNextMask != 0
		if r.reset && (!vector || !(r.term || r.trunc)) || r.next.hasMask && !r.reset {
			return fmt.Errorf("env %d: flags %#x: a reset where no episode ended", i, f)
		}
		if (r.now.hasMask || r.next.hasMask) && h.maskSize == 0 {
			return fmt.Errorf("env %d: an action mask for %v", i, h.actSpace)
		}
		masks += int(f>>2&1) + int(f>>4&1)
		resets += int(f >> 3 & 1)
	}
	if want := n*(9+obsBytes) + masks*h.maskSize + resets*obsBytes; len(b) != want {
		return fmt.Errorf("%d bytes for %d envs with %d masks and %d resets, want %d", len(b), n, masks, resets, want)
	}
	rest := b[9*n:]
	for i := range res {
		readFloats(res[i].now.obs, rest[i*obsBytes:])
	}
	rest = rest[n*obsBytes:]
	for i := range res {
		if o := &res[i].now; o.hasMask {
			rest = readMask(o.mask, rest)
		}
	}
	for i := range res {
		if res[i].reset {
			readFloats(res[i].next.obs, rest)
			rest = rest[obsBytes:]
		}
	}
	for i := range res {
		if o := &res[i].next; o.hasMask {
			rest = readMask(o.mask, rest)
		}
	}
	return nil
}

func readFloats(dst []float32, b []byte) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

func readMask(dst []bool, b []byte) []byte {
	for i := range dst {
		dst[i] = b[i] != 0
	}
	return b[len(dst):]
}

// gymMaxFrame bounds an answer's length, so that a corrupt length cannot
// make the parent allocate without limit.
const gymMaxFrame = 1 << 30

// begin starts a request in h.frame: room for its length, then the tag.
func (h *gymHost) begin(tag byte) []byte {
	return append(h.frame[:0], 0, 0, 0, 0, tag)
}

// call sends one frame (req: 4 bytes for its length, then the message) and
// returns the body of the answer ('H' or 'O'), or an error: a *gymEnvError
// for 'E', otherwise the child is killed and the error is sticky.
func (h *gymHost) call(req []byte) ([]byte, error) {
	if h.dead != nil {
		return nil, h.dead
	}
	deadline := time.Now().Add(h.timeout)
	h.in.SetWriteDeadline(deadline)
	h.out.SetReadDeadline(deadline)
	if h.interrupted.Load() {
		return nil, h.fail(os.ErrDeadlineExceeded)
	}
	binary.LittleEndian.PutUint32(req, uint32(len(req)-4))
	_, err := h.in.Write(req)
	if err == nil {
		err = h.read(h.head[:])
	}
	if err == nil {
		n := binary.LittleEndian.Uint32(h.head[:])
		if n == 0 || n > gymMaxFrame {
			err = fmt.Errorf("frame of %d bytes", n)
		} else {
			if cap(h.body) < int(n) {
				h.body = make([]byte, n)
			}
			h.body = h.body[:n]
			err = h.read(h.body)
		}
	}
	if err != nil {
		return nil, h.fail(err)
	}
	h.exchanges++
	body := h.body
	switch body[0] {
	case 'H', 'O', 'I':
		return body[1:], nil
	case 'E':
		if len(body) < 5 {
			return nil, h.fail(errors.New("short exception answer"))
		}
		e := &gymEnvError{env: int(binary.LittleEndian.Uint32(body[1:])), traceback: string(body[5:])}
		if e.keyboardInterrupt() {
			// The terminal's Ctrl-C, which the child got beside evolve.
			return nil, h.fail(fmt.Errorf("it raised KeyboardInterrupt (SIGINT): %w", ErrInterrupted))
		}
		return nil, e
	}
	return nil, h.fail(fmt.Errorf("unknown answer tag %q", body[0]))
}

// gymSpin is how long a read polls for the child's answer before it
// sleeps in the poller. A parent and child that both sleep between
// messages pay two wake-ups per exchange, which on an idle (virtual)
// machine cost tens of µs each; polling, with the CPU yielded to whoever
// needs it, keeps the answer of a fast env within a few µs.
const gymSpin = 200 * time.Microsecond

// read fills b from the child's stdout, polling for up to gymSpin before
// it waits in the poller (which honours the read deadline).
func (h *gymHost) read(b []byte) error {
	start := time.Now()
	for len(b) > 0 {
		var n int
		var rerr error
		err := h.outRaw.Read(func(fd uintptr) bool {
			for {
				n, rerr = rawRead(fd, b)
				if rerr != syscall.EAGAIN {
					return true
				}
				if time.Since(start) > gymSpin {
					return false
				}
				yield()
			}
		})
		switch {
		case err != nil:
			return err
		case rerr != nil:
			return rerr
		case n == 0:
			return io.ErrUnexpectedEOF
		}
		b = b[n:]
	}
	return nil
}

// Flags of an env in an answer.
const (
	gymTerminated = 1 << iota
	gymTruncated
	gymMask     // the observation came with an action mask
	gymReset    // a vector step ended the episode and the env was reset
	gymNextMask // the next episode's first observation came with a mask
)
