package main

import (
	"testing"

	"github.com/erpgate/erpgate/platform/front/mcpengine"
)

// TestWriteToolsOutputSchemasAdvertise: every tool of every catalogue,
// the write tools included, has an output schema the engine can advertise:
// none defines a member of the error envelope (ok, status, error), which
// would stop every replica at start-up.
func TestWriteToolsOutputSchemasAdvertise(t *testing.T) {
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range reg.Kinds() {
		for _, tool := range reg.Tools(kind) {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s/%s: %v", kind, tool.Name, r)
					}
				}()
				mcpengine.AdvertisedOutputSchema(tool.Output)
			}()
		}
	}
}
