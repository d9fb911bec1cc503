// Package pgcluster runs a private PostgreSQL cluster from the binaries
// installed on the machine, for tests (see platform/infra/pgtest and cmd/pgrun) and
// for `erpgate dev`.
//
// A cluster lives in one directory that it owns entirely:
//
//	<Dir>/pgdata/       the data directory (PGDATA), owned by the server user
//	<Dir>/password      the superuser's generated password, mode 0600
//	<Dir>/port          the port of the last successful start
//	<Dir>/postgres.log  the server log (initdb output goes to initdb.log)
//	<Dir>/start.lock    serialises concurrent Start calls on the same Dir
//
// The server listens on 127.0.0.1 only, has no Unix socket and accepts only
// scram-sha-256 password authentication for the superuser "erpgate".
//
// PostgreSQL refuses to run as root. When the calling process is root, the
// server runs as the "postgres" system user, or "nobody" when that does not
// exist; Start makes the data directory theirs and checks they can reach it.
package pgcluster
