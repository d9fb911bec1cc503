package deploy_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/erpgate/erpgate/platform/infra/freeport"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

const (
	// imageBuildTimeout bounds deploy/image/build: a static build of the
	// binary from a cold cache on a busy machine, and podman build.
	imageBuildTimeout = 20 * time.Minute
	// readyTimeout bounds the wait for /readyz of the extracted binary.
	readyTimeout = 2 * time.Minute
)

// TestContainerImage builds the release image with deploy/image/build,
// checks its configuration, extracts its filesystem with podman create and
// podman export, and runs the binary found in it against the test Postgres:
// `migrate status`, then `serve` until /readyz is green, `healthcheck` (the
// image's HEALTHCHECK) and SIGTERM. Containers cannot be started where the
// tests run, hence the extraction. It needs podman (.ci/run installs it)
// and fails without it.
func TestContainerImage(t *testing.T) {
	if _, err := exec.LookPath("podman"); err != nil {
		t.Fatal("podman is not installed: the container image test needs it (apt-get install podman; .ci/run installs it)")
	}
	ctx := t.Context()
	tag := "localhost/erpgate-test:" + randomHex(t, 6)
	build := exec.CommandContext(ctx, "image/build", tag)
	build.Env = append(os.Environ(), "VERSION=test-"+tag[len(tag)-12:])
	runLogged(t, build, imageBuildTimeout)
	t.Cleanup(func() { _ = exec.Command("podman", "rmi", "--force", tag).Run() })

	t.Run("configuration", func(t *testing.T) { checkImageConfig(t, tag) })

	root := exportImage(t, tag)
	before := listFiles(t, root)
	bin := filepath.Join(root, "erpgate")
	checkStatic(t, bin)
	for _, f := range []string{"etc/passwd", "etc/group", "etc/ssl/certs/ca-certificates.crt"} {
		if st, err := os.Stat(filepath.Join(root, f)); err != nil || st.Size() == 0 {
			t.Errorf("the image has no %s: %v", f, err)
		}
	}
	passwd, _ := os.ReadFile(filepath.Join(root, "etc/passwd"))
	if !strings.Contains(string(passwd), ":65532:65532:") {
		t.Errorf("/etc/passwd has no user 65532:\n%s", passwd)
	}

	db := pgtest.NewEmptyDatabase(t)
	migrations, err := filepath.Glob("../migrations/*.sql")
	if err != nil || len(migrations) == 0 {
		t.Fatalf("no migrations found in ../migrations: %v", err)
	}

	// migrate status on the empty database: every migration pending.
	status := output(t, asImageUser(exec.CommandContext(ctx, bin, "migrate", "status")), "DATABASE_URL="+db)
	for _, m := range migrations {
		line := lineWith(status, filepath.Base(m))
		if !strings.Contains(line, "pending") {
			t.Errorf("migrate status before serve: %s is not pending: %q\n%s", filepath.Base(m), line, status)
		}
	}

	// serve until /readyz is green.
	keys := strings.TrimSpace(output(t, asImageUser(exec.CommandContext(ctx, bin, "keys", "generate", "k1"))))
	addr := freeport.Loopback(t)
	serve := asImageUser(exec.Command(bin, "serve"))
	var logs bytes.Buffer
	serve.Stdout, serve.Stderr = &logs, &logs
	serve.Dir = root
	serve.Env = []string{
		"DATABASE_URL=" + db,
		"ERPGATE_LISTEN_ADDR=" + addr,
		"ERPGATE_PUBLIC_BASE_URL=http://" + addr,
		"ERPGATE_ADMIN_TOKEN=" + randomHex(t, 24),
		"ERPGATE_ENCRYPTION_KEYS=" + keys,
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- serve.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = serve.Process.Kill()
			<-exited
		}
	})
	waitReady(t, "http://"+addr+"/readyz", exited, &logs)

	// The Deployment's probes, against the real binary.
	c := loadManifests(t).deployment.Spec.Template.Spec.Containers[0]
	for name, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		resp, err := http.Get("http://" + addr + p.HTTPGet.Path)
		if err != nil {
			t.Errorf("the Deployment's %s probe GET %s: %v", name, p.HTTPGet.Path, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("the Deployment's %s probe GET %s answered %d on a ready gateway", name, p.HTTPGet.Path, resp.StatusCode)
		}
	}

	hc := asImageUser(exec.CommandContext(ctx, bin, "healthcheck"))
	hc.Env = []string{"ERPGATE_LISTEN_ADDR=" + addr}
	if out, err := hc.CombinedOutput(); err != nil {
		t.Errorf("healthcheck against the running gateway: %v\n%s", err, out)
	}

	status = output(t, asImageUser(exec.CommandContext(ctx, bin, "migrate", "status")), "DATABASE_URL="+db)
	for _, m := range migrations {
		if line := lineWith(status, filepath.Base(m)); !strings.Contains(line, "applied") {
			t.Errorf("migrate status after serve: %s is not applied: %q", filepath.Base(m), line)
		}
	}

	if after := listFiles(t, root); !slices.Equal(before, after) {
		t.Errorf("the binary wrote to the image's filesystem (a read-only root filesystem would refuse):\nbefore %v\nafter  %v", before, after)
	}

	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Errorf("serve after SIGTERM: %v\n%s", err, logs.String())
		}
	case <-time.After(readyTimeout):
		t.Fatalf("serve did not stop within %s of SIGTERM\n%s", readyTimeout, logs.String())
	}
}

func checkImageConfig(t *testing.T, tag string) {
	out, err := exec.Command("podman", "image", "inspect", tag).Output()
	if err != nil {
		t.Fatalf("podman image inspect: %v", err)
	}
	var images []struct {
		Config struct {
			User         string
			Entrypoint   []string
			Cmd          []string
			Env          []string
			ExposedPorts map[string]struct{}
			Labels       map[string]string
		}
		HealthCheck *struct {
			Test []string
		} `json:"Healthcheck"`
	}
	if err := json.Unmarshal(out, &images); err != nil || len(images) != 1 {
		t.Fatalf("podman image inspect gave %d images: %v", len(images), err)
	}
	c := images[0].Config
	if c.User != "65532:65532" {
		t.Errorf("image user %q, want 65532:65532 (not root)", c.User)
	}
	if strings.Join(c.Entrypoint, " ") != "/erpgate" || strings.Join(c.Cmd, " ") != "serve" {
		t.Errorf("entrypoint %q, cmd %q", c.Entrypoint, c.Cmd)
	}
	if _, ok := c.ExposedPorts[fmt.Sprintf("%d/tcp", imagePort)]; !ok {
		t.Errorf("exposed ports %v, want %d/tcp", c.ExposedPorts, imagePort)
	}
	if !slices.Contains(c.Env, fmt.Sprintf("ERPGATE_LISTEN_ADDR=0.0.0.0:%d", imagePort)) {
		t.Errorf("environment %v does not listen on every interface at %d", c.Env, imagePort)
	}
	hc := images[0].HealthCheck
	if hc == nil || strings.Join(hc.Test, " ") != "CMD /erpgate healthcheck" {
		t.Errorf("health check %+v, want CMD /erpgate healthcheck", hc)
	}
	for _, l := range []string{"title", "description", "source", "version", "revision", "created"} {
		if c.Labels["org.opencontainers.image."+l] == "" {
			t.Errorf("label org.opencontainers.image.%s is missing", l)
		}
	}
}

// asImageUser runs cmd as the image's user, 65532, when the test runs as
// root (as in CI), so the binary runs unprivileged and cannot write to the
// extracted filesystem, which root owns; otherwise as the test's own user.
func asImageUser(cmd *exec.Cmd) *exec.Cmd {
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65532, Gid: 65532}}
	}
	return cmd
}

// listFiles lists every path under root with its size and mode.
func listFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, fmt.Sprintf("%s %s %d", rel, info.Mode(), info.Size()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// exportImage extracts the image's filesystem into a temporary directory.
func exportImage(t *testing.T, tag string) string {
	t.Helper()
	out, err := exec.Command("podman", "create", tag).Output()
	if err != nil {
		t.Fatalf("podman create: %v", err)
	}
	id := strings.TrimSpace(string(out))
	t.Cleanup(func() { _ = exec.Command("podman", "rm", "--force", id).Run() })
	export := exec.Command("podman", "export", id)
	pipe, err := export.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := export.Start(); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	// t.TempDir's directories are 0700; the image's user must reach the
	// binary, as in the image, where / is 0755.
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	untar(t, pipe, root)
	if err := export.Wait(); err != nil {
		t.Fatalf("podman export: %v", err)
	}
	return root
}

func untar(t *testing.T, r io.Reader, dir string) {
	t.Helper()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("read the exported filesystem: %v", err)
		}
		name := filepath.Clean(h.Name)
		if name == "." || strings.HasPrefix(name, "..") || filepath.IsAbs(name) {
			continue
		}
		p := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// checkStatic fails unless bin is a statically linked executable: a FROM
// scratch image has no dynamic loader or C library.
func checkStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("the image's /erpgate is not an ELF executable: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the image's /erpgate is dynamically linked (it has a program interpreter)")
		}
	}
}

func waitReady(t *testing.T, url string, exited <-chan error, logs *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(readyTimeout)
	last := ""
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			t.Fatalf("serve exited before /readyz was green: %v\n%s", err, logs.String())
		default:
		}
		resp, err := http.Get(url)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, body)
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("/readyz not green within %s (last: %s)\n%s", readyTimeout, last, logs.String())
}

func runLogged(t *testing.T, cmd *exec.Cmd, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	c := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	c.Env = cmd.Env
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	t.Logf("%s:\n%s", strings.Join(cmd.Args, " "), out)
}

// output runs cmd with only the given environment and returns its standard
// output; it fails the test when the command fails.
func output(t *testing.T, cmd *exec.Cmd, env ...string) string {
	t.Helper()
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	return string(out)
}

func lineWith(text, s string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
