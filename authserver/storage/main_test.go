package storage_test

import (
	"testing"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
