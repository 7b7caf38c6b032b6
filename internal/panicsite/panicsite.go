// Package panicsite says where a recovered panic began, so that an error
// made from it still points at the line to fix (an env's, most often).
package panicsite

import (
	"fmt"
	"runtime"
	"strings"
)

// Of returns where the panic being recovered was raised, "func (file:line)",
// or "" when it cannot tell. Call it from the deferred function that
// recovers: until that function returns, the panicking frames are still on
// the stack, below runtime.gopanic. Frames of the runtime itself (an index
// out of range, a nil map) are skipped, so the site is the code that
// panicked.
func Of() string {
	pc := make([]uintptr, 64)
	n := runtime.Callers(2, pc)
	frames := runtime.CallersFrames(pc[:n])
	seen := false
	for {
		f, more := frames.Next()
		if seen && !strings.HasPrefix(f.Function, "runtime.") {
			return fmt.Sprintf("%s (%s:%d)", f.Function, f.File, f.Line)
		}
		if f.Function == "runtime.gopanic" {
			seen = true
		}
		if !more {
			return ""
		}
	}
}
