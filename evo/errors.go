package evo

import "errors"

// ErrBadInput marks every error caused by what the user gave rather than by
// the machine: a config file that does not parse or holds a bad value, a
// flag, an output directory that already holds another run, a damaged or
// mismatched checkpoint. Test with errors.Is; the command exits 2 on it.
var ErrBadInput = errors.New("bad input")

// ErrRunInUse is the error (also ErrBadInput) of a run directory that
// another process is training: New's Run and Resume take the directory's
// lock, and hold it until Run returns. A NATS pool (natsrun) returns it
// too when another coordinator trains the same run through its server (a
// copy of the run directory).
var ErrRunInUse = errors.New("run in use")

// inputError is an error that also matches ErrBadInput, without adding
// words to its message.
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }

func (e inputError) Unwrap() []error { return []error{e.err, ErrBadInput} }

// badInput marks err as caused by the user's input (nil stays nil).
func badInput(err error) error {
	if err == nil || errors.Is(err, ErrBadInput) {
		return err
	}
	return inputError{err}
}
