package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/erpgate/erpgate/platform/infra/freeport"
	"github.com/erpgate/erpgate/platform/infra/pgcluster"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// TestCtrlCUnderGoRun runs the README's first command, go run
// ./cmd/erpgate-dev, on a terminal (a pseudo-terminal), waits for the
// summary and types Ctrl-C: the command says what it builds before the
// summary, and exits with status 0 and no error line.
func TestCtrlCUnderGoRun(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// A scratch working directory for .data/, with the repository as its
	// Go workspace, so the test does not touch the developer's .data/.
	dir, err := pgcluster.NewScratchDir("erpgate-devrun-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	work := filepath.Join(dir, "go.work")
	if err := os.WriteFile(work, []byte("go 1.26.8\n\nuse "+repo+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	ptmx, pts := openPTY(t)
	cmd := exec.Command("go", "run", "github.com/erpgate/erpgate/cmd/erpgate-dev")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK="+work, "DATABASE_URL="+pgtest.NewDatabase(t),
		// The simulators take any free port as they start; the gateway's
		// address names its public URL, so it is chosen here.
		"ERPGATE_LISTEN_ADDR="+freeport.Loopback(t), "ERPGATE_PUBLIC_BASE_URL=",
		"ERPGATE_DEV_FRAPPE_ADDR=127.0.0.1:0", "ERPGATE_DEV_ACUMATICA_ADDR=127.0.0.1:0",
		"ERPGATE_DEV_FRAPPE_REGISTER_ADDR=127.0.0.1:0", "ERPGATE_DEV_ACUMATICA_REGISTER_ADDR=127.0.0.1:0")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	// The terminal's session: go run leads it and is its foreground group,
	// as when a person types the command into a shell.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = pts.Close()
	out := &lockedBuffer{}
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := ptmx.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	deadline := time.After(5 * time.Minute)
	for !strings.Contains(out.String(), "Press Ctrl-C to stop.") {
		select {
		case err := <-exited:
			t.Fatalf("go run ./cmd/erpgate-dev stopped early: %v\n%s", err, out)
		case <-deadline:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("no summary within 5 minutes:\n%s", out)
		case <-time.After(50 * time.Millisecond):
		}
	}
	text := out.String()
	if b, s := strings.Index(text, "erpgate-dev: building erpgate"), strings.Index(text, "erpgate is running at"); b < 0 || b > s {
		t.Errorf("the command did not say what it builds before the summary:\n%s", text)
	}
	if _, err := ptmx.Write([]byte{0x03}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("after Ctrl-C go run ./cmd/erpgate-dev exited with %v, want status 0:\n%s", err, out)
		}
	case <-time.After(60 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("did not stop within 60 s of Ctrl-C:\n%s", out)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "erpgate:") || strings.HasPrefix(line, "go: ") || strings.Contains(line, "failed") ||
			strings.Contains(line, "exit status") || strings.Contains(line, `"level":"error"`) {
			t.Errorf("an error line after Ctrl-C: %q", line)
		}
	}
}

// openPTY opens a pseudo-terminal pair with the standard library only.
func openPTY(t *testing.T) (ptmx, pts *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	t.Cleanup(func() { _ = ptmx.Close() })
	var unlock int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); errno != 0 {
		t.Fatalf("unlock the pseudo-terminal: %v", errno)
	}
	var n uint32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); errno != 0 {
		t.Fatalf("name the pseudo-terminal: %v", errno)
	}
	pts, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the pseudo-terminal: %v", err)
	}
	return ptmx, pts
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.ReplaceAll(b.buf.String(), "\r\n", "\n")
}
