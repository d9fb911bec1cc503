package database

import (
	"context"
	"fmt"
	"io"
	"path"
	"text/tabwriter"
	"time"

	"github.com/pressly/goose/v3"
)

// printStatus writes one line per embedded migration: its file, whether it
// is applied, and when.
func printStatus(ctx context.Context, p *goose.Provider, out io.Writer) error {
	statuses, err := p.Status(ctx)
	if err != nil {
		return fmt.Errorf("database: migration status: %w", Classify(err))
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "MIGRATION\tSTATE\tAPPLIED AT")
	for _, s := range statuses {
		appliedAt := "-"
		if s.State == goose.StateApplied {
			appliedAt = s.AppliedAt.UTC().Format(time.DateTime + " UTC")
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", path.Base(s.Source.Path), s.State, appliedAt)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("database: write migration status: %w", err)
	}
	return nil
}
