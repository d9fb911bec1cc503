package pgcluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// serverUser is the operating-system account that initdb and postgres run
// as. When the caller is not root it is the caller itself and credential is
// nil.
type serverUser struct {
	name       string
	uid, gid   uint32
	credential *syscall.Credential
}

// unprivilegedCandidates are tried in order when the caller is root: the
// Debian package's own account, then the account every Unix system has.
var unprivilegedCandidates = []string{"postgres", "nobody"}

// chooseServerUser picks who runs the server. PostgreSQL refuses to start as
// root ("root" execution of the PostgreSQL server is not permitted), and test
// and CI sessions here run as root.
func chooseServerUser() (serverUser, error) {
	if os.Geteuid() != 0 {
		return serverUser{
			name: "current user",
			uid:  uint32(os.Geteuid()),
			gid:  uint32(os.Getegid()),
		}, nil
	}
	var lookupErrs []error
	for _, name := range unprivilegedCandidates {
		u, err := user.Lookup(name)
		if err != nil {
			lookupErrs = append(lookupErrs, err)
			continue
		}
		uid, err := strconv.ParseUint(u.Uid, 10, 32)
		if err != nil {
			return serverUser{}, fmt.Errorf("pgcluster: parse uid of user %s: %w", name, err)
		}
		gid, err := strconv.ParseUint(u.Gid, 10, 32)
		if err != nil {
			return serverUser{}, fmt.Errorf("pgcluster: parse gid of user %s: %w", name, err)
		}
		if uid == 0 {
			continue
		}
		return serverUser{
			name: name,
			uid:  uint32(uid),
			gid:  uint32(gid),
			// Groups is empty on purpose: the child drops root's
			// supplementary groups.
			credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}},
		}, nil
	}
	return serverUser{}, fmt.Errorf("pgcluster: running as root and no unprivileged user to run postgres as: %w",
		errors.Join(lookupErrs...))
}

// sysProcAttr returns the process attributes for a child that runs as u.
// Setpgid keeps a terminal's Ctrl-C away from the server, so the parent
// decides when and how it stops.
func (u serverUser) sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: u.credential, Setpgid: true}
}

// chown gives path to the server user; it is a no-op when not root.
func (u serverUser) chown(path string) error {
	if u.credential == nil {
		return nil
	}
	if err := os.Lchown(path, int(u.uid), int(u.gid)); err != nil {
		return fmt.Errorf("pgcluster: give %s to user %s: %w", path, u.name, err)
	}
	return nil
}

// chownTree gives every file under root to the server user, when root is not
// already theirs (a data directory left by a run under another account).
func (u serverUser) chownTree(root string) error {
	if u.credential == nil {
		return nil
	}
	info, err := os.Stat(root)
	if err != nil {
		return fmt.Errorf("pgcluster: stat %s: %w", root, err)
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Uid == u.uid && st.Gid == u.gid {
		return nil
	}
	return filepath.WalkDir(root, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return u.chown(path)
	})
}

// checkReachable reports a clear error when the server user cannot traverse
// every directory above dir. Without it, postgres fails later with a bare
// "Permission denied" in its log, typically because the tree is under /root
// or inside a 0700 temporary directory.
func (u serverUser) checkReachable(dir string) error {
	if u.credential == nil {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("pgcluster: resolve %s: %w", dir, err)
	}
	for p := abs; ; p = filepath.Dir(p) {
		info, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("pgcluster: stat %s: %w", p, err)
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if ok && !canSearch(info.Mode().Perm(), st.Uid, st.Gid, u.uid, u.gid) {
			return fmt.Errorf("pgcluster: postgres runs as user %s (uid %d), which cannot reach %s: "+
				"%s is mode %04o owned by uid %d; choose a directory under a world-searchable path such as /tmp",
				u.name, u.uid, abs, p, info.Mode().Perm(), st.Uid)
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// canSearch reports whether a user with uid and primary gid may traverse a
// directory with the given mode and ownership.
func canSearch(mode fs.FileMode, ownerUID, ownerGID, uid, gid uint32) bool {
	switch {
	case ownerUID == uid:
		return mode&0o100 != 0
	case ownerGID == gid:
		return mode&0o010 != 0
	default:
		return mode&0o001 != 0
	}
}
