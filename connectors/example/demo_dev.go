//go:build dev

package example

import (
	"context"

	"github.com/erpgate/erpgate/connectors/example/exampletest"
	"github.com/erpgate/erpgate/platform/connector"
)

// Demo runs the simulator for `erpgate dev` (and the end-to-end kit), which
// registers the demo site it describes. It is built only with -tags dev, so
// that no release binary links the simulator.
func (*Connector) Demo(_ context.Context, env connector.DemoEnv) (*connector.Demo, error) {
	sim := exampletest.New()
	url, stop, err := connector.ServeDemo(env.Addr, "127.0.0.1:8105", sim)
	if err != nil {
		return nil, err
	}
	return &connector.Demo{
		Name: "Example ERP", URL: url, Close: stop,
		Site: connector.DemoSite{
			Slug: "demo-example", DisplayName: "Demo Example ERP (simulator)",
			Credentials: map[string]string{"api_key": sim.APIKey},
		},
	}, nil
}

var _ connector.Demoer = (*Connector)(nil)
