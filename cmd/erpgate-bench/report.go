package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// report is the results file, bench/results/<date>.json.
type report struct {
	Machine   machineInfo `json:"machine"`
	Started   time.Time   `json:"started"`
	Seconds   float64     `json:"seconds"`
	Scenarios []any       `json:"scenarios"`
}

// machineInfo describes where the figures were measured.
type machineInfo struct {
	Cores            int               `json:"cores"`
	MemoryMiB        int64             `json:"memory_mib"`
	CPUModel         string            `json:"cpu_model"`
	OS               string            `json:"os"`
	Kernel           string            `json:"kernel"`
	Go               string            `json:"go"`
	Postgres         string            `json:"postgres"`
	PostgresSettings map[string]string `json:"postgres_settings"`
	Commit           string            `json:"commit,omitempty"`
	// GatewayEnv is what -gateway-env added to every gateway's
	// environment, if anything.
	GatewayEnv []string `json:"gateway_env,omitempty"`
}

// machineRef is what each scenario repeats about the machine.
type machineRef struct {
	Cores     int   `json:"cores"`
	MemoryMiB int64 `json:"memory_mib"`
}

func (m machineInfo) ref() machineRef { return machineRef{Cores: m.Cores, MemoryMiB: m.MemoryMiB} }

// target is one of the targets and whether this run met it.
type target struct {
	Target string  `json:"target"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Met    bool    `json:"met"`
	Note   string  `json:"note,omitempty"`
}

// figures are the client-side figures of one load run.
type figures struct {
	RPS    float64        `json:"rps"`
	P50MS  float64        `json:"p50_ms"`
	P99MS  float64        `json:"p99_ms"`
	Calls  int            `json:"calls"`
	Errors map[string]int `json:"errors,omitempty"`
}

func figuresOf(r loadResult) figures {
	f := figures{RPS: round(r.rps(), 1), P50MS: ms(r.percentile(0.50)), P99MS: ms(r.percentile(0.99)), Calls: r.Calls}
	if len(r.Outcomes) > 0 {
		f.Errors = r.Outcomes
	}
	return f
}

// cpuPerCall is CPU time per call in microseconds, per process.
type cpuPerCall struct {
	Client    float64 `json:"load_generator_us"`
	Simulator float64 `json:"simulator_us"`
	Gateway   float64 `json:"gateway_us"`
	Postgres  float64 `json:"postgres_us"`
	Proxy     float64 `json:"proxy_us,omitempty"`
	Total     float64 `json:"total_us"`
}

func cpuPerCallOf(r loadResult) cpuPerCall {
	us := func(d time.Duration) float64 { return round(float64(r.perCall(d))/1e3, 1) }
	c := cpuPerCall{Client: us(r.CPU.client), Simulator: us(r.CPU.sim), Gateway: us(r.CPU.gateways), Postgres: us(r.CPU.pg), Proxy: us(r.CPU.proxy)}
	c.Total = round(c.Client+c.Simulator+c.Gateway+c.Postgres+c.Proxy, 1)
	return c
}

func ms(d time.Duration) float64 { return round(float64(d)/1e6, 2) }

func round(v float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	if v < 0 {
		return -float64(int64(-v*p+0.5)) / p
	}
	return float64(int64(v*p+0.5)) / p
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return round(a/b, 3)
}

// describeMachine reads the machine's cores, memory and versions.
func describeMachine(ctx context.Context, root string) machineInfo {
	m := machineInfo{Cores: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version()}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var kb int64
			if _, err := fmt.Sscanf(sc.Text(), "MemTotal: %d kB", &kb); err == nil {
				m.MemoryMiB = kb >> 10
			}
		}
		f.Close()
	}
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(raw), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if raw, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(raw))
	}
	if out, err := exec.CommandContext(ctx, "postgres", "--version").Output(); err == nil {
		m.Postgres = strings.TrimSpace(string(out))
	}
	if out, err := exec.CommandContext(ctx, "git", "-C", root, "rev-parse", "--short", "HEAD").Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
		// A build with changes not yet committed says so: the commit
		// alone would name code that did not run.
		if st, err := exec.CommandContext(ctx, "git", "-C", root, "status", "--porcelain").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
			m.Commit += "-dirty"
		}
	}
	return m
}

// writeReport writes the results file into dir, named after the date; a
// second run on the same day gets a numbered name rather than overwriting.
func writeReport(dir string, r *report) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", err
	}
	date := r.Started.Format("2006-01-02")
	path := filepath.Join(dir, date+".json")
	for i := 2; ; i++ {
		if _, err := os.Stat(path); os.IsNotExist(err) {
			break
		}
		path = filepath.Join(dir, fmt.Sprintf("%s-%d.json", date, i))
	}
	return path, os.WriteFile(path, append(raw, '\n'), 0o644)
}

// table collects rows for the printed summary.
type table struct {
	rows [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	_ = tw.Flush()
}

func metMark(ts []target) string {
	var parts []string
	for _, t := range ts {
		mark := "met"
		if !t.Met {
			mark = "NOT met"
		}
		parts = append(parts, fmt.Sprintf("%s: %s", t.Target, mark))
	}
	return strings.Join(parts, "; ")
}

func f1(v float64) string { return fmt.Sprintf("%.1f", v) }
func f2(v float64) string { return fmt.Sprintf("%.2f", v) }
