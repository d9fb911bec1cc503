package acumatica

import (
	"context"
	"time"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// clearCacheInterval is how often a site's cache may be cleared. Each
// clear makes the next calls read the OpenAPI document again and rebuild
// the site's index in the shared store; one user clearing in a loop would
// keep the store rebuilding for every tenant.
const clearCacheInterval = time.Minute

// clearedKey marks a site's cache as cleared within the interval: the
// entry is stored by the clear that empties the cache and lives for the
// interval, so every replica sees it.
const clearedKey = "cleared"

// clearCacheTool drops what erpgate cached about this site.
func clearCacheTool() connector.Tool {
	return connector.Tool{
		Name:  "acumatica_clear_cache",
		Title: "Clear Acumatica metadata cache",
		Description: "Clear what erpgate has cached about this Acumatica site — the endpoint's OpenAPI document, the generic inquiries' metadata and the schema-knowledge index — for every user and replica. " +
			"Use it after a customisation is published, an inquiry is exposed or the instance is upgraded; the next describe, inquiry or schema call reads fresh metadata. A site's cache is cleared at most once a minute. It never touches Acumatica's data.",
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
			if call.Cache != nil {
				if _, recent, err := call.Cache.Get(ctx, clearedKey); err == nil && recent {
					return nil, toolerr.New(toolerr.RateLimited,
						"this site's metadata cache was cleared less than a minute ago, and what was read since then is fresh; clear it again after a minute").
						WithRetryAfter(clearCacheInterval)
				}
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
			if call.Cache != nil {
				// Best effort: were the mark not stored, the next clear
				// would simply be let through.
				_ = call.Cache.Set(ctx, clearedKey, []byte{1}, clearCacheInterval)
			}
			return map[string]any{"entriesCleared": n, "indexCleared": indexed,
				"message": "the metadata cache of this site is empty; the next call that needs metadata reads it from Acumatica"}, nil
		},
	}
}
