package simd

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// mulAdd is y + x·b as Go code: one rounding where the compiler fuses it.
//
//go:noinline
func mulAdd(y, x, b float32) float32 { return y + x*b }

// TestKernelsSayWhetherGoCodeFuses: Kernels named arm64's plain-Go build
// and amd64's alike ("go"), and GOAMD64=v3's like the default build
// ("avx2-fma"), though their Go code fuses multiply-adds and rounds
// differently; NATS workers and resumed checkpoints trusted the name. Now
// a build whose Go code fuses says its target; on amd64 the name says so
// exactly. The amd64 default build runs this test again as GOAMD64=v3
// where the CPU can.
func TestKernelsSayWhetherGoCodeFuses(t *testing.T) {
	// (1+2⁻¹²)² = 1 + 2⁻¹¹ + 2⁻²⁴: rounded to float32, the 2⁻²⁴ is lost (a
	// tie, to even), so the unfused sum below is 0 and the fused one 2⁻²⁴.
	x := float32(1 + 1.0/4096)
	fuses := mulAdd(-(1+1.0/2048), x, x) != 0
	named := strings.Contains(Kernels(), " ")
	if fuses && !named || runtime.GOARCH == "amd64" && fuses != named {
		t.Errorf("Kernels() = %q, but Go code here fuses multiply-adds: %v", Kernels(), fuses)
	}
	if runtime.GOARCH != "amd64" || os.Getenv("EVOLVE_SIMD_V3") != "" || codeTarget != "" || !HasAVX2FMA {
		return
	}
	if testing.Short() {
		t.Skip("-short: the GOAMD64=v3 build is not checked")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH: the GOAMD64=v3 build is not checked")
	}
	cmd := exec.Command("go", "test", "-count=1", "-run", "^TestKernelsSayWhetherGoCodeFuses$", ".")
	cmd.Env = append(os.Environ(), "GOAMD64=v3", "EVOLVE_SIMD_V3=1")
	out, err := cmd.CombinedOutput()
	switch {
	case strings.Contains(string(out), "microarchitecture support"):
		t.Logf("this CPU cannot run a GOAMD64=v3 build: %s", out)
	case err != nil:
		t.Errorf("GOAMD64=v3 go test: %v\n%s", err, out)
	}
}
