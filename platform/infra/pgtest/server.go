package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/pgcluster"
)

// EnvDatabaseURL names the environment variable holding the admin URL of a
// running server to use instead of a private cluster.
const EnvDatabaseURL = "TEST_DATABASE_URL"

const (
	// serverStartTimeout bounds initdb plus the first start.
	serverStartTimeout = 3 * time.Minute
	// adminMaxConns is enough for tests creating and dropping databases in
	// parallel; CREATE DATABASE serialises on the server anyway.
	adminMaxConns = 4
	// shutdownTimeout bounds stopping the private cluster at exit.
	shutdownTimeout = time.Minute
)

// mainCalled records that the test binary runs under Main, which owns the
// cleanup of a private cluster.
var mainCalled atomic.Bool

// server is the database server in use by this test binary.
type server struct {
	url     string // admin URL
	admin   *pgxpool.Pool
	cluster *pgcluster.Cluster // nil when TEST_DATABASE_URL is used
	scratch string             // directory holding the private cluster

	templateMu        sync.Mutex
	template          string        // name of the migrated template, once ensured
	templateBuildTime time.Duration // 0 when another binary built it
}

var (
	serverMu sync.Mutex
	current  *server
)

// getServer returns the server, starting a private cluster on first use.
func getServer() (*server, error) {
	if !mainCalled.Load() {
		return nil, errors.New("pgtest: the package has no `func TestMain(m *testing.M) { pgtest.Main(m) }`, " +
			"which is needed to clean up the test database server")
	}
	return connectServer()
}

// connectServer returns the server, starting a private cluster on first use
// (which only Main cleans up).
func connectServer() (*server, error) {
	serverMu.Lock()
	defer serverMu.Unlock()
	if current != nil {
		return current, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), serverStartTimeout)
	defer cancel()
	s, err := startServer(ctx)
	if err != nil {
		return nil, err
	}
	current = s
	return s, nil
}

func startServer(ctx context.Context) (*server, error) {
	s := &server{url: os.Getenv(EnvDatabaseURL)}
	if s.url == "" {
		scratch, err := pgcluster.NewScratchDir("erpgate-pgtest-")
		if err != nil {
			return nil, err
		}
		cluster, err := pgcluster.Start(ctx, pgcluster.Options{
			Dir:      filepath.Join(scratch, "cluster"),
			Settings: pgcluster.EphemeralSettings(),
		})
		if err != nil {
			os.RemoveAll(scratch)
			return nil, fmt.Errorf("pgtest: start a private PostgreSQL (or set %s): %w", EnvDatabaseURL, err)
		}
		s.url, s.cluster, s.scratch = cluster.URL("postgres"), cluster, scratch
	}
	admin, err := database.Open(ctx, s.url,
		database.WithMaxConns(adminMaxConns),
		database.WithStatementTimeout(0))
	if err != nil {
		s.close()
		return nil, fmt.Errorf("pgtest: connect to the test server: %w", err)
	}
	s.admin = admin
	return s, nil
}

// close releases everything the server holds; a private cluster is stopped
// and deleted.
func (s *server) close() error {
	if s.admin != nil {
		s.admin.Close()
	}
	if s.cluster == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := s.cluster.Remove(ctx)
	if rmErr := os.RemoveAll(s.scratch); rmErr != nil {
		err = errors.Join(err, rmErr)
	}
	return err
}

// shutdown closes the server if one was started.
func shutdown() error {
	serverMu.Lock()
	defer serverMu.Unlock()
	if current == nil {
		return nil
	}
	err := current.close()
	current = nil
	return err
}
