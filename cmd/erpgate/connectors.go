package main

import (
	"github.com/erpgate/erpgate/connectors/acumatica"
	"github.com/erpgate/erpgate/connectors/frappe"
	"github.com/erpgate/erpgate/platform/connector"
)

// connectorList is every connector this build serves, in the order
// `erpgate dev` shows their demos. Adding a connector is one line here, or
// one file with a build tag whose init appends to it (as
// connectors_example.go does under -tags erpgate_example).
var connectorList = []func(connectorDeps) connector.Connector{
	func(connectorDeps) connector.Connector { return frappe.New() },
	func(d connectorDeps) connector.Connector {
		return acumatica.New(acumatica.Options{HTTPClient: d.HTTPClient, ServiceTokens: d.ServiceTokens, CanaryInquiry: d.CanaryInquiry})
	},
}

// newRegistry registers every connector this build serves, catalogue only.
func newRegistry() (*connector.Registry, error) { return newRegistryWith(connectorDeps{}) }

// newRegistryWith registers every connector this build serves.
func newRegistryWith(deps connectorDeps) (*connector.Registry, error) {
	reg := connector.NewRegistry()
	for _, newConnector := range connectorList {
		if err := reg.Register(newConnector(deps)); err != nil {
			return nil, err
		}
	}
	return reg, nil
}
