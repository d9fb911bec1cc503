package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
)

const (
	// Superuser is the role initdb creates; every URL of the cluster uses it.
	Superuser = "erpgate"

	// defaultStartTimeout bounds Start when ctx has no deadline: initdb plus
	// crash recovery of a large dev cluster fit comfortably.
	defaultStartTimeout = 3 * time.Minute
	// defaultStopTimeout bounds Stop when ctx has no deadline.
	defaultStopTimeout = time.Minute
	// portAttempts is how often Start retries when another process took the
	// port it picked.
	portAttempts = 3
)

// Options configures Start.
type Options struct {
	// Dir holds the whole cluster (see the package comment); it is created
	// if missing, and its parent directories must be searchable by the server
	// user.
	Dir string
	// Port is the loopback TCP port. 0 picks one: the port of the previous
	// start when it is still free, else any free port.
	Port int
	// Logger receives lifecycle messages; nil discards them. The server's own
	// log always goes to <Dir>/postgres.log.
	Logger *zap.Logger
	// Settings are extra server settings, passed as `-c name=value` on every
	// start, for example EphemeralSettings(). They cannot change the listen
	// address or the socket directory.
	Settings map[string]string
}

// Cluster is a running private PostgreSQL server. Its methods are safe for
// concurrent use.
type Cluster struct {
	dir      string
	dataDir  string
	logPath  string
	port     int
	password string
	logger   *zap.Logger

	pm      *postmaster
	logFile *os.File // our copy of the server's stdout/stderr; nil if adopted

	stopOnce sync.Once
	stopErr  error
}

// Start brings up the cluster in opts.Dir and returns once it accepts
// connections. It runs initdb when the directory holds no cluster yet. When
// a postmaster that an earlier run started is still running on the directory
// and answers, Start adopts it as it is (its port and settings win over
// opts); when its process is gone, Start removes the stale pid file and
// starts postgres afresh. Without a deadline on ctx, Start gives up after
// three minutes.
//
// A server that Start launches is tied to the calling process: it gets a
// fast-shutdown signal if the process dies without calling Stop. An adopted
// server stays tied to the process that launched it.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Dir == "" {
		return nil, errors.New("pgcluster: Options.Dir is required")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: resolve %s: %w", opts.Dir, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStartTimeout)
		defer cancel()
	}
	logger := opts.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	logger = logger.With(zap.String("dir", dir))

	user, err := chooseServerUser()
	if err != nil {
		return nil, err
	}
	if err := prepareDir(dir, user); err != nil {
		return nil, err
	}
	unlock, err := lockDir(ctx, filepath.Join(dir, "start.lock"))
	if err != nil {
		return nil, err
	}
	defer unlock()

	c := &Cluster{
		dir:     dir,
		dataDir: filepath.Join(dir, "pgdata"),
		logPath: filepath.Join(dir, "postgres.log"),
		logger:  logger,
	}
	major, err := dataDirMajorVersion(c.dataDir)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: inspect %s: %w", c.dataDir, err)
	}
	if err := c.loadPassword(major != 0); err != nil {
		return nil, err
	}
	bins, err := findBinaries(ctx, major)
	if err != nil {
		return nil, err
	}
	logger.Debug("postgres binaries", zap.String("bin_dir", bins.dir), zap.Int("major", bins.major),
		zap.String("server_user", user.name))

	if major == 0 {
		if err := c.initdb(ctx, bins, user); err != nil {
			return nil, err
		}
	} else {
		adopted, err := c.adoptRunning(ctx, user)
		if err != nil {
			return nil, err
		}
		if adopted {
			logger.Info("postgres: reusing the postmaster of an earlier run",
				zap.Int("pid", c.pm.pid), zap.Int("port", c.port))
			return c, nil
		}
	}
	if err := user.chownTree(c.dataDir); err != nil {
		return nil, err
	}
	if err := c.startWithFreePort(ctx, bins, user, opts); err != nil {
		return nil, err
	}
	if err := writePrivateFile(filepath.Join(dir, "port"), strconv.Itoa(c.port)+"\n"); err != nil {
		c.stopForFailedStart()
		return nil, fmt.Errorf("pgcluster: record port: %w", err)
	}
	logger.Info("postgres: started", zap.Int("pid", c.pm.pid), zap.Int("port", c.port),
		zap.Int("major", bins.major), zap.String("log", c.logPath))
	return c, nil
}

// prepareDir creates dir. As root it stays root's but searchable (0711), so
// the server user reaches pgdata without being able to read the password file.
func prepareDir(dir string, user serverUser) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("pgcluster: create parent of %s: %w", dir, err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("pgcluster: create %s: %w", dir, err)
	}
	if user.credential != nil {
		if err := os.Chmod(dir, 0o711); err != nil {
			return fmt.Errorf("pgcluster: make %s searchable for user %s: %w", dir, user.name, err)
		}
	}
	return user.checkReachable(dir)
}

// loadPassword reads the stored superuser password, or creates one for a new
// cluster. An initialised cluster without its password file cannot be used.
func (c *Cluster) loadPassword(initialised bool) error {
	path := filepath.Join(c.dir, "password")
	password, created, err := loadOrCreatePassword(path)
	if err != nil {
		return err
	}
	if created && initialised {
		_ = os.Remove(path)
		return fmt.Errorf("pgcluster: %s holds a cluster but no password file; remove the directory to start over", c.dir)
	}
	c.password = password
	return nil
}

// startWithFreePort starts postgres, picking a new port when the chosen one
// was taken between the check and the server's bind.
func (c *Cluster) startWithFreePort(ctx context.Context, bins binaries, user serverUser, opts Options) error {
	portFile := filepath.Join(c.dir, "port")
	for attempt := 1; ; attempt++ {
		port, err := choosePort(opts.Port, portFile)
		if err != nil {
			return err
		}
		err = c.startPostmaster(ctx, bins, user, port, opts.Settings)
		if err == nil {
			return nil
		}
		if !errors.Is(err, errPortTaken) || opts.Port != 0 || attempt == portAttempts {
			return err
		}
		c.logger.Info("postgres: port taken during start, picking another", zap.Int("port", port))
		if err := os.Remove(portFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("pgcluster: forget port %d: %w", port, err)
		}
	}
}

// URL returns a superuser connection URL for database, for example
// postgres://erpgate:<password>@127.0.0.1:5432/postgres?sslmode=disable.
func (c *Cluster) URL(database string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(Superuser, c.password),
		Host:     net.JoinHostPort(loopbackHost, strconv.Itoa(c.port)),
		Path:     "/" + database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Port returns the TCP port the server listens on.
func (c *Cluster) Port() int { return c.port }

// Dir returns the cluster's directory.
func (c *Cluster) Dir() string { return c.dir }

// LogPath returns the server log file.
func (c *Cluster) LogPath() string { return c.logPath }

// Stop shuts the server down in fast mode (open transactions are rolled
// back, clients disconnected) and waits for it to exit. Later calls return
// the first call's result.
func (c *Cluster) Stop(ctx context.Context) error {
	c.stopOnce.Do(func() {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, defaultStopTimeout)
			defer cancel()
		}
		c.stopErr = c.pm.stop(ctx)
		if c.logFile != nil {
			c.logFile.Close()
		}
		if c.stopErr == nil {
			c.logger.Info("postgres: stopped", zap.Int("pid", c.pm.pid))
		}
	})
	return c.stopErr
}

// Remove stops the server and deletes its directory, data and log included.
func (c *Cluster) Remove(ctx context.Context) error {
	stopErr := c.Stop(ctx)
	if err := os.RemoveAll(c.dir); err != nil {
		return errors.Join(stopErr, fmt.Errorf("pgcluster: remove %s: %w", c.dir, err))
	}
	return stopErr
}
