package database_test

import (
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

func TestOpenAppliesDefaultsURLAndOptions(t *testing.T) {
	url := pgtest.NewDatabase(t)
	settings := func(t *testing.T, url string, opts ...database.Option) (app, statement, idleInTx string, maxConns int32) {
		t.Helper()
		pool, err := database.Open(t.Context(), url, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		if err := pool.QueryRow(t.Context(),
			"SELECT current_setting('application_name'), current_setting('statement_timeout'), current_setting('idle_in_transaction_session_timeout')").
			Scan(&app, &statement, &idleInTx); err != nil {
			t.Fatal(err)
		}
		return app, statement, idleInTx, pool.Config().MaxConns
	}

	app, statement, idle, maxConns := settings(t, url)
	if app != database.ApplicationName || statement != "30s" || idle != "1min" || maxConns != database.DefaultMaxConns {
		t.Errorf("defaults: application_name=%q statement_timeout=%q idle_in_transaction=%q max_conns=%d",
			app, statement, idle, maxConns)
	}

	_, statement, _, maxConns = settings(t, url+"&statement_timeout=5000&pool_max_conns=3")
	if statement != "5s" || maxConns != 3 {
		t.Errorf("URL settings: statement_timeout=%q max_conns=%d, want 5s and 3", statement, maxConns)
	}

	_, statement, _, maxConns = settings(t, url+"&statement_timeout=5000",
		database.WithStatementTimeout(2*time.Second), database.WithMaxConns(7))
	if statement != "2s" || maxConns != 7 {
		t.Errorf("options: statement_timeout=%q max_conns=%d, want 2s and 7", statement, maxConns)
	}
}
