package envs

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGymChildDiesWithItsParent kills (SIGKILL, nothing runs after it) a
// process whose gym child is stuck inside step, and checks that the kernel
// ends the child too.
func TestGymChildDiesWithItsParent(t *testing.T) {
	if os.Getenv("EVOLVE_GYM_PARENT") == "1" {
		gymParent()
		return
	}
	gymTestOptions(t, "Hangs") // skips without python3; sets PYTHONPATH for the child
	cmd := exec.Command(os.Args[0], "-test.run=^TestGymChildDiesWithItsParent$")
	cmd.Env = append(os.Environ(), "EVOLVE_GYM_PARENT=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("parent wrote no child pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "child "))
	if err != nil {
		t.Fatalf("parent wrote %q", line)
	}
	if processGone(pid) {
		t.Fatal("child not running before its parent is killed")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("python child %d outlived its killed parent", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gymParent is the parent process of TestGymChildDiesWithItsParent: it
// starts a child whose step hangs, says its pid, and waits to be killed.
func gymParent() {
	g, err := NewGymEnv("test", Options{"module_env": "gymtest:Hangs", "timeout": 60})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	g.Reset(0)
	fmt.Printf("child %d\n", g.pid())
	g.Step([]float32{0}) // hangs in Python until the kernel ends both
	os.Exit(1)
}

// TestGymChildKilledAloneIsBadOutput: a vector's child that dies of
// SIGINT or SIGTERM (a terminal's Ctrl-C, a service manager stopping the
// process group) fails the step with ErrInterrupted, which a program that
// was not stopped itself reports as the env's failure (ErrBadOutput).
func TestGymChildKilledAloneIsBadOutput(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		v, res := resetGymVector(t, 2, gymTestOptions(t, "Hangs"))
		time.AfterFunc(300*time.Millisecond, func() { syscall.Kill(v.gym.cmd.Process.Pid, sig) })
		_, err := v.Step(legalActions(res))
		if !errors.Is(err, ErrInterrupted) || !errors.Is(err, ErrBadOutput) || !strings.Contains(err.Error(), "died of SIG") {
			t.Errorf("%v: step error %v, want ErrInterrupted and ErrBadOutput", sig, err)
		}
	}
}
