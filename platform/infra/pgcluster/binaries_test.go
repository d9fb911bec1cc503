package pgcluster

import (
	"path/filepath"
	"testing"
)

func TestFindBinariesReportsTheirMajorVersion(t *testing.T) {
	b, err := findBinaries(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if b.major < 10 {
		t.Errorf("major version %d, want a supported PostgreSQL", b.major)
	}
	if !filepath.IsAbs(b.dir) || !isExecutable(b.initdb()) || !isExecutable(b.postgres()) {
		t.Errorf("binaries %+v are not an absolute directory with initdb and postgres", b)
	}

	same, err := findBinaries(t.Context(), b.major)
	if err != nil || same.major != b.major {
		t.Errorf("findBinaries(%d) = %+v, %v", b.major, same, err)
	}
	if _, err := findBinaries(t.Context(), 1); err == nil {
		t.Error("findBinaries(1) found a PostgreSQL 1 installation")
	}
}
