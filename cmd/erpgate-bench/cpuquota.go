package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// cpuQuota is a cgroup that holds processes to a share of the machine's
// CPU time, as a container's CPU limit does: the Linux CFS bandwidth
// controller, through cgroup v1's cpu controller or cgroup v2's cpu.max.
// Creating one needs a writable cgroup file system (root, or a delegated
// subtree); where there is none the scenario says so and skips the run.
type cpuQuota struct {
	dir    string
	parent string
	v2     bool
}

// quotaPeriodMicros is the CFS period. Shorter than the kernel's default
// (100 ms), so that a throttled replica stalls for milliseconds, not for
// most of a period.
const quotaPeriodMicros = 20_000

// newCPUQuota creates a cgroup named name whose processes together get
// cores CPUs' worth of time.
func newCPUQuota(name string, cores float64) (*cpuQuota, error) {
	quota := strconv.Itoa(int(cores * quotaPeriodMicros))
	period := strconv.Itoa(quotaPeriodMicros)
	// cgroup v1: a cpu controller hierarchy of its own.
	if v1 := "/sys/fs/cgroup/cpu"; fileExists(filepath.Join(v1, "cpu.cfs_quota_us")) {
		q := &cpuQuota{dir: filepath.Join(v1, name), parent: v1}
		if err := os.Mkdir(q.dir, 0o755); err != nil {
			return nil, fmt.Errorf("cgroup v1: %w", err)
		}
		if err := errors.Join(
			os.WriteFile(filepath.Join(q.dir, "cpu.cfs_period_us"), []byte(period), 0o644),
			os.WriteFile(filepath.Join(q.dir, "cpu.cfs_quota_us"), []byte(quota), 0o644),
		); err != nil {
			_ = os.Remove(q.dir)
			return nil, fmt.Errorf("cgroup v1: %w", err)
		}
		return q, nil
	}
	// cgroup v2: the root's children may use the cpu controller.
	root := "/sys/fs/cgroup"
	ctl, err := os.ReadFile(filepath.Join(root, "cgroup.subtree_control"))
	if err != nil || !slices.Contains(strings.Fields(string(ctl)), "cpu") {
		if err == nil {
			err = errors.New("the cpu controller is not enabled for the root's children")
		}
		return nil, fmt.Errorf("no cgroup CPU controller to use: %w", err)
	}
	q := &cpuQuota{dir: filepath.Join(root, name), parent: root, v2: true}
	if err := os.Mkdir(q.dir, 0o755); err != nil {
		return nil, fmt.Errorf("cgroup v2: %w", err)
	}
	if err := os.WriteFile(filepath.Join(q.dir, "cpu.max"), []byte(quota+" "+period), 0o644); err != nil {
		_ = os.Remove(q.dir)
		return nil, fmt.Errorf("cgroup v2: %w", err)
	}
	return q, nil
}

// add moves the process pid, all its threads, into the cgroup.
func (q *cpuQuota) add(pid int) error {
	return os.WriteFile(filepath.Join(q.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
}

// throttled reports how many CFS periods the cgroup's processes were
// throttled in, from its cpu.stat.
func (q *cpuQuota) throttled() int64 {
	raw, err := os.ReadFile(filepath.Join(q.dir, "cpu.stat"))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "nr_throttled "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// remove moves the cgroup's processes back to its parent and deletes it.
func (q *cpuQuota) remove() error {
	raw, err := os.ReadFile(filepath.Join(q.dir, "cgroup.procs"))
	if err != nil {
		return err
	}
	for pid := range strings.FieldsSeq(string(raw)) {
		_ = os.WriteFile(filepath.Join(q.parent, "cgroup.procs"), []byte(pid), 0o644)
	}
	return os.Remove(q.dir)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
