// Package pgtest gives tests real PostgreSQL databases: each test gets its
// own database, cloned in milliseconds from a template that has every
// migration applied.
//
// A package that uses it declares
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// and then calls NewDatabase or NewPool in its tests. The server is the one
// named by TEST_DATABASE_URL (a superuser, or a role with CREATEDB); without
// it, a private cluster is started in a temporary directory the first time a
// test asks for a database, and removed when the test binary ends.
// `go tool task test` runs every package against one shared server that
// cmd/pgrun starts.
package pgtest
