package pgtest

import (
	"strings"
	"testing"
)

func TestDatabaseName(t *testing.T) {
	tests := []struct{ test, prefix string }{
		{"TestSites", "t_testsites_"},
		{"TestSites/Create_dup-slug", "t_testsites_create_dup_slug_"},
		{"Test/☃/x", "t_test_x_"},
		{strings.Repeat("A", 100), "t_" + strings.Repeat("a", maxNameFromTest) + "_"},
	}
	for _, tt := range tests {
		got := databaseName(tt.test)
		if !strings.HasPrefix(got, tt.prefix) || len(got) != len(tt.prefix)+10 {
			t.Errorf("databaseName(%q) = %q, want %q followed by 10 hex digits", tt.test, got, tt.prefix)
		}
		if len(got) > 63 {
			t.Errorf("databaseName(%q) = %q is longer than PostgreSQL's 63-byte limit", tt.test, got)
		}
	}
	if databaseName("TestX") == databaseName("TestX") {
		t.Error("two databases for the same test got the same name")
	}
}

func TestDatabaseURLReplacesOnlyTheDatabase(t *testing.T) {
	got, err := databaseURL("postgres://u:p%40ss@127.0.0.1:5432/postgres?sslmode=disable", "t_x_1")
	if err != nil {
		t.Fatal(err)
	}
	if want := "postgres://u:p%40ss@127.0.0.1:5432/t_x_1?sslmode=disable"; got != want {
		t.Errorf("databaseURL = %s, want %s", got, want)
	}
	if _, err := databaseURL("host=localhost dbname=x", "y"); err == nil {
		t.Error("a keyword/value connection string was accepted")
	}
}
