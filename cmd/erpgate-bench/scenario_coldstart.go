package main

import (
	"context"
	"fmt"
	"slices"
	"time"
)

const coldStartRuns = 5

type coldStartScenario struct {
	Name        string     `json:"name"`
	Machine     machineRef `json:"machine"`
	Concurrency int        `json:"concurrency"`
	// Seconds is the slowest of the runs: the figure the target is held to.
	Seconds       float64   `json:"seconds"`
	MedianSeconds float64   `json:"median_seconds"`
	RunsSeconds   []float64 `json:"runs_seconds"`
	Targets       []target  `json:"targets"`
	Notes         []string  `json:"notes,omitempty"`
}

// coldStart times the production binary from exec to a green /readyz on
// the already migrated benchmark database, several times in a row, with the
// benchmark's other replica running idle.
func (b *bench) coldStart(ctx context.Context, _ *gatewayProc, tab *table) (any, error) {
	sc := &coldStartScenario{Name: "cold_start", Machine: b.machine.ref(), Concurrency: 1}
	var runs []time.Duration
	for range coldStartRuns {
		g, err := b.startGateway(ctx, b.bins.plain, nil)
		if err != nil {
			return nil, err
		}
		runs = append(runs, g.Ready)
		g.stop()
		sc.RunsSeconds = append(sc.RunsSeconds, round(g.Ready.Seconds(), 3))
	}
	sorted := slices.Clone(runs)
	slices.Sort(sorted)
	sc.Seconds = round(sorted[len(sorted)-1].Seconds(), 3)
	sc.MedianSeconds = round(sorted[len(sorted)/2].Seconds(), 3)
	sc.Targets = []target{{Target: "process start to /readyz green <= 1 s (slowest of 5)", Value: sc.Seconds, Unit: "s", Met: sc.Seconds <= 1}}
	sc.Notes = []string{"the release binary (no pprof), database already migrated, /readyz polled every millisecond from exec"}
	tab.add("cold_start", "5 starts", fmt.Sprintf("slowest %.3f s, median %.3f s", sc.Seconds, sc.MedianSeconds))
	tab.add("", "targets", metMark(sc.Targets))
	return sc, nil
}
