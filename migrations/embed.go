// Package migrations holds erpgate's goose SQL migrations, embedded in the
// binary so that start-up and `erpgate migrate` need no files on disk.
package migrations

import "embed"

// FS holds every migration file at its root, named NNNNN_description.sql.
//
//go:embed *.sql
var FS embed.FS
