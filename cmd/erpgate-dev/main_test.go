package main

import (
	"testing"

	"github.com/erpgate/erpgate/platform/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
