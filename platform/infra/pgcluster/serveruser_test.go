package pgcluster

import (
	"io/fs"
	"testing"
)

func TestCanSearch(t *testing.T) {
	const uid, gid = 101, 104
	tests := []struct {
		name               string
		mode               fs.FileMode
		ownerUID, ownerGID uint32
		want               bool
	}{
		{"owner with x", 0o700, uid, 0, true},
		{"owner without x, others with x", 0o601, uid, 0, false},
		{"group with x", 0o710, 0, gid, true},
		{"group without x", 0o701, 0, gid, false},
		{"other with x", 0o711, 0, 0, true},
		{"root's 0700 home", 0o700, 0, 0, false},
		{"sticky tmp", fs.ModeSticky | 0o777, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := canSearch(tt.mode.Perm(), tt.ownerUID, tt.ownerGID, uid, gid); got != tt.want {
				t.Errorf("canSearch(%04o, owner %d:%d) = %v, want %v", tt.mode.Perm(), tt.ownerUID, tt.ownerGID, got, tt.want)
			}
		})
	}
}
