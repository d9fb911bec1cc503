package connector

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Cache is a connector's metadata cache for one site, shared by every
// replica. It holds what an ERP says about itself — schema documents,
// inquiry metadata — never records, credentials or anything that differs
// between users: every caller on the site sees the same entries. Entries
// expire after the TTL they were stored with.
//
// A Cache is always bound to one site (see SiteStorage); keys never need to
// name the site.
type Cache interface {
	// Get returns the value stored under key. ok is false when there is no
	// live entry. An error is an infrastructure failure; callers may treat
	// it as a miss and fetch from the ERP.
	Get(ctx context.Context, key string) (value []byte, ok bool, err error)
	// Set stores value under key for ttl, replacing any previous entry.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// Clear removes every entry of the site and reports how many there were.
	Clear(ctx context.Context) (int, error)
}

// IndexDocument is one searchable item of a site's schema knowledge: an
// entity, a field, an inquiry.
type IndexDocument struct {
	// Kind groups documents ("entity", "field", "inquiry"). Name is unique
	// within its kind ("SalesOrder", "SalesOrder.OrderNbr").
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Title is a short human label, searched with medium weight.
	Title string `json:"title"`
	// Keywords are searched with the highest weight: identifiers split into
	// words ("Sales Order SalesOrder"), screen ids.
	Keywords string `json:"keywords"`
	// Body is the rest of the searchable text, with the lowest weight.
	Body string `json:"body"`
	// Data is the connector's payload, returned exactly as stored.
	Data json.RawMessage `json:"data,omitempty"`
}

// IndexHit is a ranked search result.
type IndexHit struct {
	Document IndexDocument
	// Rank orders hits (higher is better); it has no meaning across queries.
	Rank float64
	// AllTerms is true when the document matched every word of the query.
	AllTerms bool
}

// IndexStatus describes a site's schema index.
type IndexStatus struct {
	// Built is true when an index exists and has not expired.
	Built bool
	// Version is what the connector stored with Replace (for example the
	// endpoint version the index describes).
	Version string
	// BuiltAt is when Replace stored it; Documents how many it holds.
	BuiltAt   time.Time
	Documents int
}

// SchemaIndex is a site's full-text index of schema knowledge, built by a
// connector from what the ERP describes and searched with ranking. It is
// shared by every replica and bound to one site.
//
// Errors are infrastructure failures, never "not found": a missing
// document is reported with ok=false.
type SchemaIndex interface {
	// Status reports whether a live index exists.
	Status(ctx context.Context) (IndexStatus, error)
	// Replace swaps the site's whole index for docs, atomically, live for
	// ttl. Documents with an empty kind or name, or duplicates, are an
	// error.
	Replace(ctx context.Context, version string, docs []IndexDocument, ttl time.Duration) error
	// Search ranks the documents against free text (words, not a query
	// language) and returns at most limit hits, best first; documents that
	// contain every word come before those that contain some. kinds
	// restricts the kinds searched (none: all). An expired index is still
	// searched; Status tells the caller to rebuild it.
	Search(ctx context.Context, query string, kinds []string, limit int) ([]IndexHit, error)
	// Document returns one document.
	Document(ctx context.Context, kind, name string) (doc IndexDocument, ok bool, err error)
	// Documents lists documents of kind whose name starts with prefix
	// (case-insensitive; "" for all), in name order, at most limit.
	Documents(ctx context.Context, kind, prefix string, limit int) ([]IndexDocument, error)
	// Clear drops the site's index.
	Clear(ctx context.Context) error
}

// SiteStorage opens the shared per-site stores. The platform implements it
// on Postgres; connectors receive the site-bound stores in Call and never
// choose the site themselves.
type SiteStorage interface {
	Cache(site uuid.UUID) Cache
	SchemaIndex(site uuid.UUID) SchemaIndex
}
