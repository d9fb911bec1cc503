package pgtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/migrations"
	"github.com/erpgate/erpgate/platform/infra/database"
)

// templateLockKey is the advisory lock (in the admin database) under which
// test binaries create templates; the bytes spell "erpgtmpl".
const templateLockKey int64 = 0x65727067746d706c

// templateTimeout bounds waiting for, and building, the template: another
// test binary may be migrating it.
const templateTimeout = 5 * time.Minute

var templateOnce = sync.OnceValues(migrationSetHash)

// templateName names the migrated template after a hash of the embedded
// migration files, so a changed migration gets a new template while
// unchanged ones are reused across test binaries and runs.
func templateName() (string, error) {
	hash, err := templateOnce()
	if err != nil {
		return "", err
	}
	return "erpgate_tpl_" + hash[:16], nil
}

// templateFormat changes whenever the way a template is built changes, so
// that templates built the old way are not reused.
const templateFormat = "pgtest template v1\x00"

// migrationSetHash hashes every embedded migration's name and content.
func migrationSetHash() (string, error) {
	h := sha256.New()
	h.Write([]byte(templateFormat))
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		content, err := fs.ReadFile(migrations.FS, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(content))
		h.Write(content)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("pgtest: hash embedded migrations: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ensureTemplate makes sure the migrated template exists on the server and
// returns its name. Test binaries running in parallel serialise on an
// advisory lock; the first builds the template, the others find it done.
//
// The template is marked IS_TEMPLATE (which also marks it complete: a
// creator that died half-way leaves a database without the mark, which is
// dropped and rebuilt) and ALLOW_CONNECTIONS false, because CREATE DATABASE
// ... TEMPLATE fails while anyone is connected to the template.
func (s *server) ensureTemplate(ctx context.Context) (string, error) {
	s.templateMu.Lock()
	defer s.templateMu.Unlock()
	if s.template != "" {
		return s.template, nil
	}
	name, err := templateName()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, templateTimeout)
	defer cancel()

	// A dedicated connection: closing it releases the lock whatever happens.
	conn, err := pgx.Connect(ctx, s.url)
	if err != nil {
		return "", fmt.Errorf("pgtest: connect to lock the template: %w", database.Classify(err))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", templateLockKey); err != nil {
		return "", fmt.Errorf("pgtest: lock the template: %w", database.Classify(err))
	}

	var complete bool
	err = conn.QueryRow(ctx, "SELECT datistemplate FROM pg_database WHERE datname = $1", name).Scan(&complete)
	switch {
	case err == nil && complete:
		s.template = name
		return name, nil
	case err == nil:
		if _, err := conn.Exec(ctx, "DROP DATABASE "+quoteIdent(name)+" WITH (FORCE)"); err != nil {
			return "", fmt.Errorf("pgtest: drop incomplete template %s: %w", name, err)
		}
	case !database.IsNoRows(err):
		return "", fmt.Errorf("pgtest: look up template %s: %w", name, database.Classify(err))
	}

	started := time.Now()
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+quoteIdent(name)+" TEMPLATE template0"); err != nil {
		return "", fmt.Errorf("pgtest: create template %s: %w", name, err)
	}
	url, err := databaseURL(s.url, name)
	if err != nil {
		return "", err
	}
	// MigrateUp closes its connections before it returns.
	if err := database.MigrateUp(ctx, url); err != nil {
		return "", fmt.Errorf("pgtest: migrate template %s: %w", name, err)
	}
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+quoteIdent(name)+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"); err != nil {
		return "", fmt.Errorf("pgtest: seal template %s: %w", name, err)
	}
	s.templateBuildTime = time.Since(started)
	s.template = name
	return name, nil
}
