//go:build erpgate_example

package main

import (
	"github.com/erpgate/erpgate/connectors/example"
	"github.com/erpgate/erpgate/platform/connector"
)

// The example connector (docs/connectors.md), served only by a build with
// -tags erpgate_example: its end-to-end test builds one. This is all it
// needs outside connectors/example/.
func init() {
	connectorList = append(connectorList, func(connectorDeps) connector.Connector { return example.New() })
}
