package acumatica

import (
	"context"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// clearCacheTool drops what erpgate cached about this site.
func clearCacheTool() connector.Tool {
	return connector.Tool{
		Name:  "acumatica_clear_cache",
		Title: "Clear Acumatica metadata cache",
		Description: "Clear what erpgate has cached about this Acumatica site — the endpoint's OpenAPI document, the generic inquiries' metadata and the schema-knowledge index — for every user and replica. " +
			"Use it after a customisation is published, an inquiry is exposed or the instance is upgraded; the next describe, inquiry or schema call reads fresh metadata. It never touches Acumatica's data.",
		Input: schema.Object(),
		Output: schema.Object(
			schema.Prop("entriesCleared", schema.Integer("How many cached documents were dropped.")).Required(),
			schema.Prop("indexCleared", schema.Boolean("Whether a schema index was dropped.")).Required(),
			schema.Prop("message", schema.String("What happened.")).Required(),
		),
		Effect: connector.Read,
		// It clears erpgate's cache and index, and never asks Acumatica.
		Local: true,
		Handler: func(ctx context.Context, call *connector.Call) (any, error) {
			if call.Cache == nil && call.Index == nil {
				return map[string]any{"entriesCleared": 0, "indexCleared": false,
					"message": "this deployment keeps no shared metadata cache; every call already reads fresh metadata"}, nil
			}
			n := 0
			if call.Cache != nil {
				var err error
				if n, err = call.Cache.Clear(ctx); err != nil {
					return nil, toolerr.Wrap(toolerr.Internal, err, "erpgate could not clear the metadata cache")
				}
			}
			indexed := false
			if call.Index != nil {
				st, err := call.Index.Status(ctx)
				if err != nil {
					return nil, toolerr.Wrap(toolerr.Internal, err, "erpgate could not read the schema index")
				}
				indexed = st.Version != ""
				if err := call.Index.Clear(ctx); err != nil {
					return nil, toolerr.Wrap(toolerr.Internal, err, "erpgate could not clear the schema index")
				}
			}
			return map[string]any{"entriesCleared": n, "indexCleared": indexed,
				"message": "the metadata cache of this site is empty; the next call that needs metadata reads it from Acumatica"}, nil
		},
	}
}
