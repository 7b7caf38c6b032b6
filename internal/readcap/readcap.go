// Package readcap reads a whole file up to a size, so that a path naming a
// device or an endless stream (/dev/zero, a pipe that keeps writing) is an
// error naming it rather than a crash out of memory.
package readcap

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// File reads path whole if it holds at most limit bytes; a longer file is
// an error naming the path and the limit. Errors from opening and reading
// are os's, which name the path.
func File(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if pe := (*os.PathError)(nil); err != nil && !errors.As(err, &pe) {
		err = &os.PathError{Op: "read", Path: path, Err: err}
	}
	if err != nil {
		return nil, err // the file's own reads name it already
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: longer than %d bytes", path, limit)
	}
	return b, nil
}
