package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// debianBinGlob is where Debian's postgresql-N packages install the server
// binaries. They are not on PATH there: postgresql-common only links wrappers.
const debianBinGlob = "/usr/lib/postgresql/*/bin"

// binaries locates the programs of one PostgreSQL installation.
type binaries struct {
	dir   string // directory holding initdb and postgres
	major int    // major version reported by `postgres --version`
}

func (b binaries) initdb() string   { return filepath.Join(b.dir, "initdb") }
func (b binaries) postgres() string { return filepath.Join(b.dir, "postgres") }

// findBinaries returns the installation to use: the one whose initdb is on
// PATH, else the newest under /usr/lib/postgresql. When wantMajor is not zero
// (an existing data directory records the version that created it), the first
// candidate of that major version wins, because a data directory can only be
// served by the major version that initialised it.
func findBinaries(ctx context.Context, wantMajor int) (binaries, error) {
	candidates := binaryDirCandidates()
	if len(candidates) == 0 {
		return binaries{}, errors.New("pgcluster: no PostgreSQL server binaries found: initdb is not on PATH and " +
			debianBinGlob + " has none (on Debian: apt-get install postgresql)")
	}
	var found []binaries
	for _, dir := range candidates {
		major, err := serverMajorVersion(ctx, filepath.Join(dir, "postgres"))
		if err != nil {
			continue
		}
		b := binaries{dir: dir, major: major}
		if wantMajor == 0 || major == wantMajor {
			return b, nil
		}
		found = append(found, b)
	}
	if len(found) == 0 {
		return binaries{}, fmt.Errorf("pgcluster: no working postgres binary in %s", strings.Join(candidates, ", "))
	}
	versions := make([]string, 0, len(found))
	for _, b := range found {
		versions = append(versions, fmt.Sprintf("%d (%s)", b.major, b.dir))
	}
	return binaries{}, fmt.Errorf("pgcluster: the data directory needs PostgreSQL %d but only %s is installed",
		wantMajor, strings.Join(versions, ", "))
}

// binaryDirCandidates lists directories holding both initdb and postgres, in
// order of preference, without duplicates.
func binaryDirCandidates() []string {
	var dirs []string
	add := func(dir string) {
		if dir == "" || slices.Contains(dirs, dir) {
			return
		}
		if isExecutable(filepath.Join(dir, "initdb")) && isExecutable(filepath.Join(dir, "postgres")) {
			dirs = append(dirs, dir)
		}
	}
	if path, err := exec.LookPath("initdb"); err == nil {
		// Follow symlinks (for example /usr/local/bin/initdb pointing into
		// /usr/lib/postgresql/15/bin): postgres must come from the same
		// installation as initdb.
		if resolved, err := filepath.EvalSymlinks(path); err == nil {
			path = resolved
		}
		if abs, err := filepath.Abs(path); err == nil {
			add(filepath.Dir(abs))
		}
	}
	for _, dir := range debianBinDirs() {
		add(dir)
	}
	return dirs
}

// debianBinDirs returns /usr/lib/postgresql/<ver>/bin directories, newest
// version first.
func debianBinDirs() []string {
	matches, err := filepath.Glob(debianBinGlob)
	if err != nil {
		return nil
	}
	version := func(dir string) float64 {
		v, err := strconv.ParseFloat(filepath.Base(filepath.Dir(dir)), 64)
		if err != nil {
			return -1
		}
		return v
	}
	slices.SortFunc(matches, func(a, b string) int {
		va, vb := version(a), version(b)
		switch {
		case va > vb:
			return -1
		case va < vb:
			return 1
		default:
			return strings.Compare(a, b)
		}
	})
	return matches
}

func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0
}

var versionPattern = regexp.MustCompile(`\(PostgreSQL\) (\d+)`)

// serverMajorVersion runs `postgres --version`, which postgres answers even
// as root.
func serverMajorVersion(ctx context.Context, postgres string) (int, error) {
	out, err := exec.CommandContext(ctx, postgres, "--version").Output()
	if err != nil {
		return 0, fmt.Errorf("run %s --version: %w", postgres, err)
	}
	m := versionPattern.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("parse %s --version output %q", postgres, strings.TrimSpace(string(out)))
	}
	return strconv.Atoi(string(m[1]))
}

// dataDirMajorVersion reads PG_VERSION of an initialised data directory; it
// returns 0 when the directory has not been initialised.
func dataDirMajorVersion(dataDir string) (int, error) {
	raw, err := os.ReadFile(filepath.Join(dataDir, "PG_VERSION"))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read PG_VERSION: %w", err)
	}
	major, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		return 0, fmt.Errorf("parse PG_VERSION %q: %w", strings.TrimSpace(string(raw)), err)
	}
	return major, nil
}
