package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
)

// lineHandler is the slog.Handler of a run's own notes (the trainer's and
// the NATS coordinator's): one line each, in the command's voice, as its
// other messages are ("evolve: warning: agent diverged: … (agent=3)"),
// not a log record's time=… level=… msg=… (a worker, a service, keeps
// those).
type lineHandler struct {
	mu     *sync.Mutex
	w      io.Writer
	level  slog.Level
	prefix string // "evolve"
	attrs  string // " k=v" of WithAttrs, formatted
}

func newLineHandler(w io.Writer, prefix string, level slog.Level) *lineHandler {
	return &lineHandler{mu: new(sync.Mutex), w: w, level: level, prefix: prefix}
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(h.prefix + ": ")
	switch {
	case r.Level >= slog.LevelError:
		b.WriteString("error: ")
	case r.Level >= slog.LevelWarn:
		b.WriteString("warning: ")
	}
	b.WriteString(r.Message)
	attrs := h.attrs
	r.Attrs(func(a slog.Attr) bool {
		attrs += formatAttr(a)
		return true
	})
	if attrs != "" {
		b.WriteString(" (" + attrs[1:] + ")")
	}
	b.WriteString("\n")
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *lineHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	for _, a := range as {
		c.attrs += formatAttr(a)
	}
	return &c
}

// WithGroup is not used by evolve's notes: groups are flattened.
func (h *lineHandler) WithGroup(string) slog.Handler { return h }

// formatAttr is " key=value", the value quoted when it holds a space, a
// quote or nothing.
func formatAttr(a slog.Attr) string {
	v := fmt.Sprint(a.Value.Resolve().Any())
	if v == "" || strings.ContainsAny(v, " \"=\t\n") {
		v = strconv.Quote(v)
	}
	return " " + a.Key + "=" + v
}
