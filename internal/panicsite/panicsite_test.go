package panicsite

import (
	"strings"
	"testing"
)

//go:noinline
func explode(kind string) {
	switch kind {
	case "panic":
		panic("boom")
	case "index":
		var s []int
		_ = s[len(kind)] // a runtime error: the site is this line, not the runtime's
	}
}

// TestOfNamesThePanickingFunction: a panic's site, recovered a few frames up,
// is the function that panicked and its line, for an explicit panic and a
// runtime error alike; outside a panic there is none.
func TestOfNamesThePanickingFunction(t *testing.T) {
	for _, kind := range []string{"panic", "index"} {
		var site string
		func() {
			defer func() {
				if recover() != nil {
					site = Of()
				}
			}()
			explode(kind)
		}()
		line := map[string]string{"panic": "panicsite_test.go:12)", "index": "panicsite_test.go:15)"}[kind]
		if !strings.Contains(site, "panicsite.explode") || !strings.HasSuffix(site, line) {
			t.Errorf("%s: site %q, want panicsite.explode at %s", kind, site, line)
		}
	}
	if s := Of(); s != "" {
		t.Errorf("outside a panic: %q", s)
	}
}
