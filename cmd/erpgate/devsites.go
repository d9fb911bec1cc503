package main

import (
	"encoding/json"
	"os"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/devstate"
)

// This file holds what `erpgate dev` (dev.go, built with -tags dev) and the
// tests share. It imports no simulator and knows no kind by name; each
// connector brings its demo (connector.Demoer, in its -tags dev file).

// Where `erpgate dev` keeps its state, relative to the working directory.
const (
	devDataDir   = ".data"
	devStateFile = "dev.json"
)

// The types of .data/dev.json (platform/connector/devstate, which the
// end-to-end kit reads too).
type (
	devState           = devstate.State
	devRegistrationERP = devstate.RegistrationERP
	devPort            = devstate.Port
	devSite            = devstate.Site
	devUser            = devstate.User
)

func readDevState(path string) devState {
	var s devState
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &s)
	}
	return s
}

// devAddrEnv is the variable that moves a kind's simulator:
// ERPGATE_DEV_FRAPPE_ADDR, or with infix REGISTER_
// ERPGATE_DEV_FRAPPE_REGISTER_ADDR for its registration simulator.
func devAddrEnv(kind, infix string) string {
	return "ERPGATE_DEV_" + strings.ToUpper(kind) + "_" + infix + "ADDR"
}

// writeToolNames lists the catalogue's tools of kind that change ERP data
// (Write and Destructive), which the demo sites enable.
func writeToolNames(reg *connector.Registry, kind string) []string {
	var names []string
	for _, t := range reg.Tools(kind) {
		if t.Effect != connector.Read {
			names = append(names, t.Name)
		}
	}
	return names
}
