package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Process figures come from Linux's /proc. The benchmark runs every part
// (load generator, simulator, gateways, Postgres) as its own process so
// that CPU time and memory can be read per part.

// clockTick is USER_HZ, the unit of the CPU times in /proc/<pid>/stat. It
// is 100 on every Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// procStat holds the fields of /proc/<pid>/stat the benchmark reads.
type procStat struct {
	ppid                         int
	utime, stime, cutime, cstime time.Duration
}

func readProcStat(pid int) (procStat, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// The command name (field 2) may contain spaces; it ends at the last ')'.
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(string(raw[i+1:]))
	// f[0] is field 3 (state); utime is field 14, so f[11].
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	num := func(k int) time.Duration {
		v, _ := strconv.ParseInt(f[k], 10, 64)
		return time.Duration(v) * clockTick
	}
	ppid, _ := strconv.Atoi(f[1])
	return procStat{ppid: ppid, utime: num(11), stime: num(12), cutime: num(13), cstime: num(14)}, nil
}

// cpuTime is the CPU time (user and system) pid has used so far.
func cpuTime(pid int) time.Duration {
	st, err := readProcStat(pid)
	if err != nil {
		return 0
	}
	return st.utime + st.stime
}

// treeCPUTime is the CPU time of pid, of its exited (reaped) children and
// of its live children: for a postmaster, all of Postgres.
func treeCPUTime(pid int) time.Duration {
	root, err := readProcStat(pid)
	if err != nil {
		return 0
	}
	total := root.utime + root.stime + root.cutime + root.cstime
	for _, child := range childrenOf(pid) {
		if st, err := readProcStat(child); err == nil {
			total += st.utime + st.stime
		}
	}
	return total
}

// memStatus reads VmRSS and VmHWM (peak RSS) of pid in bytes.
func memStatus(pid int) (rss, peak int64) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var dst *int64
		switch {
		case strings.HasPrefix(line, "VmRSS:"):
			dst = &rss
		case strings.HasPrefix(line, "VmHWM:"):
			dst = &peak
		default:
			continue
		}
		fields := strings.Fields(line)
		if len(fields) >= 2 {
			kb, _ := strconv.ParseInt(fields[1], 10, 64)
			*dst = kb << 10
		}
	}
	return rss, peak
}

// resetPeakRSS sets VmHWM back to the current RSS (Linux clear_refs 5), so
// a scenario's peak is its own. It reports whether that worked.
func resetPeakRSS(pid int) bool {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
}

// machineCPU returns the busy and total CPU time of the whole machine.
func machineCPU() (busy, total time.Duration) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := bytes.Cut(raw, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 8 || f[0] != "cpu" {
		return 0, 0
	}
	for i, s := range f[1:] {
		v, _ := strconv.ParseInt(s, 10, 64)
		d := time.Duration(v) * clockTick
		total += d
		// Guest times (9th, 10th) are already counted in user.
		if i == 3 || i == 4 || i == 7 { // idle, iowait, steal
			continue
		}
		if i >= 8 {
			total -= d
			continue
		}
		busy += d
	}
	return busy, total
}

// postmasterPID reads the pid of a cluster's postmaster from its data dir.
func postmasterPID(dataDir string) int {
	raw, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	line, _, _ := bytes.Cut(raw, []byte("\n"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(line)))
	return pid
}

// cpuSample is the CPU time of every part at one moment.
type cpuSample struct {
	at                        time.Time
	client, sim, pg, proxy    time.Duration
	gateways                  []time.Duration
	machineBusy, machineTotal time.Duration
}

// parts identifies the processes whose CPU time a run accounts for.
type parts struct {
	sim      int
	pg       int
	proxy    int
	gateways []int
}

func (p parts) sample() cpuSample {
	s := cpuSample{at: time.Now(), client: cpuTime(os.Getpid()), sim: cpuTime(p.sim)}
	if p.pg != 0 {
		s.pg = treeCPUTime(p.pg)
	}
	if p.proxy != 0 {
		s.proxy = cpuTime(p.proxy)
	}
	for _, g := range p.gateways {
		s.gateways = append(s.gateways, cpuTime(g))
	}
	s.machineBusy, s.machineTotal = machineCPU()
	return s
}

// cpuUse is CPU time per part over an interval.
type cpuUse struct {
	wall                             time.Duration
	client, sim, pg, proxy, gateways time.Duration
	machineBusy, machineTotal        time.Duration
}

func (a cpuSample) until(b cpuSample) cpuUse {
	u := cpuUse{wall: b.at.Sub(a.at), client: b.client - a.client, sim: b.sim - a.sim, pg: b.pg - a.pg, proxy: b.proxy - a.proxy,
		machineBusy: b.machineBusy - a.machineBusy, machineTotal: b.machineTotal - a.machineTotal}
	for i := range a.gateways {
		u.gateways += b.gateways[i] - a.gateways[i]
	}
	return u
}

// utilisation is the share of the machine's CPU time that was busy.
func (u cpuUse) utilisation() float64 {
	if u.machineTotal <= 0 {
		return 0
	}
	return float64(u.machineBusy) / float64(u.machineTotal)
}
