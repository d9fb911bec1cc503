package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// pinning moves processes onto sets of CPUs (sched_setaffinity on every
// thread), so that a measured process gets a core of its own, and puts
// every process it moved back on all CPUs when undone.
type pinning struct {
	all   unix.CPUSet
	moved []int
}

// newPinning needs at least two CPUs: the last for the processes measured
// alone, the others for the rest.
func newPinning() (*pinning, error) {
	n := runtime.NumCPU()
	if n < 2 {
		return nil, errors.New("one CPU: nothing to give a process of its own")
	}
	p := &pinning{}
	for c := range n {
		p.all.Set(c)
	}
	return p, nil
}

// alone is the last CPU; rest are the others.
func (p *pinning) alone() unix.CPUSet {
	var s unix.CPUSet
	s.Set(runtime.NumCPU() - 1)
	return s
}

func (p *pinning) rest() unix.CPUSet {
	s := p.all
	s.Clear(runtime.NumCPU() - 1)
	return s
}

// pin moves every thread of pid, and of its children when tree is set
// (PostgreSQL's backends), onto set.
func (p *pinning) pin(pid int, set unix.CPUSet, tree bool) error {
	pids := []int{pid}
	if tree {
		pids = append(pids, childrenOf(pid)...)
	}
	for _, pr := range pids {
		tids, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pr))
		if err != nil {
			return err
		}
		for _, t := range tids {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			s := set
			if err := unix.SchedSetaffinity(tid, &s); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("pin thread %d of %d: %w", tid, pr, err)
			}
		}
		p.moved = append(p.moved, pr)
	}
	return nil
}

// undo puts every moved process (all its threads) back on all CPUs.
func (p *pinning) undo() {
	moved := p.moved
	for _, pr := range moved {
		_ = p.pin(pr, p.all, false)
	}
	p.moved = nil
}

// ownCore puts the processes alone on a core of their own, and the load
// generator (this process), others and PostgreSQL (pg, with its backends)
// on the other cores, then waits for the Go runtimes to see their new CPU
// sets (Go updates GOMAXPROCS from the affinity mask within a second). Its
// undo puts every process back on all CPUs and waits again.
func ownCore(alone, others []int, pg int) (undo func(), err error) {
	pin, err := newPinning()
	if err != nil {
		return nil, err
	}
	errs := []error{pin.pin(os.Getpid(), pin.rest(), false), pin.pin(pg, pin.rest(), true)}
	for _, pid := range others {
		errs = append(errs, pin.pin(pid, pin.rest(), false))
	}
	for _, pid := range alone {
		errs = append(errs, pin.pin(pid, pin.alone(), false))
	}
	undo = func() {
		pin.undo()
		time.Sleep(2 * time.Second)
	}
	if err := errors.Join(errs...); err != nil {
		undo()
		return nil, err
	}
	time.Sleep(2 * time.Second)
	return undo, nil
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil || child == pid {
			continue
		}
		if st, err := readProcStat(child); err == nil && st.ppid == pid {
			out = append(out, child)
		}
	}
	return out
}
