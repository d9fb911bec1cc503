package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/erpgate/erpgate/platform/infra/freeport"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// TestServeFlushesBufferedLogsOnExit: serve buffers its log lines, so the
// last ones ("stopped", written just before the process exits) reach
// standard error only if the buffer is flushed on the way out.
func TestServeFlushesBufferedLogsOnExit(t *testing.T) {
	bin, err := sharedErpgateBinary()
	if err != nil {
		t.Fatal(err)
	}
	addr := freeport.Loopback(t)
	env, admin := replicaEnv(t, addr, pgtest.NewDatabase(t), map[string]string{"ERPGATE_LOG_LEVEL": "info"})
	r := startReplica(t, bin, addr, env)
	// The buffer's count of dropped lines is served, 0 for a reader
	// (this test) that keeps up.
	got := scrape(t, r.URL+"/metrics", admin)
	if f, ok := got["erpgate_log_dropped_lines_total"]; !ok || len(f.GetMetric()) != 1 || f.GetMetric()[0].GetCounter().GetValue() != 0 {
		t.Errorf("erpgate_log_dropped_lines_total = %v, want the counter 0", f)
	}
	r.stop(t)
	logs := r.logs.String()
	for _, want := range []string{`"msg":"listening"`, `"msg":"shutting down"`, `"msg":"stopped"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("standard error lacks %s:\n%s", want, logs)
		}
	}
}

// TestLogCallsDoNotWaitForAStalledLogReader: a log line is written on
// every tool call of every tenant, so a log reader that stops reading (a
// stalled standard error pipe, a slow journald) must not hold those calls
// up. The logger writes three buffers' worth of lines to a pipe nobody
// reads: every call must return, the lines that did not fit dropped and
// counted. Once the reader catches up, each line written is either read, in
// order, or counted in a "dropped" line: none is lost silently.
func TestLogCallsDoNotWaitForAStalledLogReader(t *testing.T) {
	pr, pw := io.Pipe()
	t.Cleanup(func() { _ = pr.Close() }) // frees a write still blocked if the test fails
	log := newBufferedLogger(zapcore.InfoLevel, zapcore.AddSync(pw))

	pad := strings.Repeat("x", 200)
	n := 3 * logBufferSize / len(pad)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			log.Info("mcp_request", zap.Int("seq", i), zap.String("pad", pad))
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second): // generous: the calls either return or never do
		t.Fatalf("logging %d lines of 200 bytes is still blocked on a log reader that does not read", n)
	}

	read := make(chan []string)
	go func() {
		var lines []string
		s := bufio.NewScanner(pr)
		s.Buffer(nil, 1<<20)
		for s.Scan() {
			lines = append(lines, s.Text())
		}
		read <- lines
	}()
	if err := log.Sync(); err != nil {
		t.Fatal(err)
	}
	_ = pw.Close()
	lines := <-read

	next, dropped := 0, 0
	for _, l := range lines {
		var e struct {
			Msg     string `json:"msg"`
			Seq     *int   `json:"seq"`
			Dropped int    `json:"dropped"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		switch {
		case e.Seq != nil:
			if *e.Seq < next {
				t.Fatalf("line %d came after line %d", *e.Seq, next-1)
			}
			next = *e.Seq + 1
		case e.Dropped > 0:
			dropped += e.Dropped
		default:
			t.Fatalf("unexpected line %q", l)
		}
	}
	got := len(lines)
	for _, l := range lines {
		if strings.Contains(l, `"dropped"`) {
			got--
		}
	}
	if dropped == 0 {
		t.Errorf("no line says lines were dropped, yet %d lines of a buffer of %d bytes reached a stalled reader", n, logBufferSize)
	}
	if got+dropped != n {
		t.Errorf("%d lines read and %d counted as dropped; %d were written", got, dropped, n)
	}
	if count, ok := droppedLogLines(log); !ok || count() != uint64(dropped) {
		t.Errorf("the logger's count for /metrics is not the %d lines the log says were dropped", dropped)
	}
}

// TestServeStopsWhileItsLogReaderIsStalled: a log call never waits for a
// stalled log reader, but the last flush on the way out did, so a replica
// whose standard error nobody read any more never exited after SIGTERM
// (only a SIGKILL ended it). It waits a bounded time, then exits: the
// lines still buffered are lost, as they would be to the SIGKILL.
func TestServeStopsWhileItsLogReaderIsStalled(t *testing.T) {
	bin, err := sharedErpgateBinary()
	if err != nil {
		t.Fatal(err)
	}
	addr := freeport.Loopback(t)
	env, _ := replicaEnv(t, addr, pgtest.NewDatabase(t), map[string]string{"ERPGATE_LOG_LEVEL": "debug"})
	stalled, stderr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// Nobody reads stalled; it is closed at the end, which frees a
	// process still writing if the test fails.
	t.Cleanup(func() { _ = stalled.Close() })
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "ERPGATE_LISTEN_ADDR="+addr)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = stderr.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	// Every request is a debug line: far more than the pipe and the
	// buffer hold, so the reader is behind for good.
	ready := false
	for i := 0; i < 3000; i++ {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		ready = ready || resp.StatusCode == http.StatusOK
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if !ready {
		t.Fatal("the replica never became ready")
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Only a hang fails here: the limit turns it into a failure.
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the replica exited with %v", err)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("the replica did not exit after SIGTERM while its log reader was stalled")
	}
}
