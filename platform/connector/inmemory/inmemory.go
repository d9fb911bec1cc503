// Package inmemory implements the connector storage contracts in process
// memory: connector.SiteStorage (metadata cache and schema index) and
// connector.ServiceTokenStore. Tests use it, and so does a connector
// given no store (the Acumatica connector falls back to it). A deployment
// wires the Postgres implementations instead (platform/store/erpmeta,
// platform/store/erptokens), which every replica shares.
//
// The index ranks like the Postgres one in spirit — documents holding every
// query word first, keywords above title above body, words matched as
// prefixes — but without stemming.
package inmemory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/connector"
)

// SiteStorage is an in-memory connector.SiteStorage. The zero value is not
// usable; call NewSiteStorage.
type SiteStorage struct {
	now func() time.Time

	mu      sync.Mutex
	entries map[uuid.UUID]map[string]entry
	indexes map[uuid.UUID]*siteIndex
}

type entry struct {
	value   []byte
	expires time.Time
}

type siteIndex struct {
	version string
	builtAt time.Time
	expires time.Time
	docs    []connector.IndexDocument
}

var _ connector.SiteStorage = (*SiteStorage)(nil)

// NewSiteStorage returns empty storage. now, if set, is the clock used for
// expiry (tests pass a fake one); nil means time.Now.
func NewSiteStorage(now func() time.Time) *SiteStorage {
	if now == nil {
		now = time.Now
	}
	return &SiteStorage{now: now, entries: map[uuid.UUID]map[string]entry{}, indexes: map[uuid.UUID]*siteIndex{}}
}

// Cache returns site's cache.
func (s *SiteStorage) Cache(site uuid.UUID) connector.Cache { return siteCache{s: s, site: site} }

// SchemaIndex returns site's index.
func (s *SiteStorage) SchemaIndex(site uuid.UUID) connector.SchemaIndex {
	return siteIndexView{s: s, site: site}
}

type siteCache struct {
	s    *SiteStorage
	site uuid.UUID
}

func (c siteCache) Get(_ context.Context, key string) ([]byte, bool, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	e, ok := c.s.entries[c.site][key]
	if !ok || !c.s.now().Before(e.expires) {
		return nil, false, nil
	}
	return slices.Clone(e.value), true, nil
}

func (c siteCache) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	if key == "" || ttl <= 0 {
		return fmt.Errorf("inmemory: cache entry needs a key and a positive ttl")
	}
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	m := c.s.entries[c.site]
	if m == nil {
		m = map[string]entry{}
		c.s.entries[c.site] = m
	}
	m[key] = entry{value: slices.Clone(value), expires: c.s.now().Add(ttl)}
	return nil
}

func (c siteCache) Clear(context.Context) (int, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	n := 0
	for _, e := range c.s.entries[c.site] {
		if c.s.now().Before(e.expires) {
			n++
		}
	}
	delete(c.s.entries, c.site)
	return n, nil
}

type siteIndexView struct {
	s    *SiteStorage
	site uuid.UUID
}

func (x siteIndexView) Status(context.Context) (connector.IndexStatus, error) {
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	ix := x.s.indexes[x.site]
	if ix == nil {
		return connector.IndexStatus{}, nil
	}
	return connector.IndexStatus{Built: x.s.now().Before(ix.expires), Version: ix.version, BuiltAt: ix.builtAt, Documents: len(ix.docs)}, nil
}

func (x siteIndexView) Replace(_ context.Context, version string, docs []connector.IndexDocument, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("inmemory: index needs a positive ttl")
	}
	seen := map[[2]string]bool{}
	for i, d := range docs {
		if d.Kind == "" || d.Name == "" {
			return fmt.Errorf("inmemory: document %d has no kind or name", i)
		}
		if seen[[2]string{d.Kind, d.Name}] {
			return fmt.Errorf("inmemory: duplicate document %s %q", d.Kind, d.Name)
		}
		seen[[2]string{d.Kind, d.Name}] = true
	}
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	now := x.s.now()
	x.s.indexes[x.site] = &siteIndex{version: version, builtAt: now, expires: now.Add(ttl), docs: slices.Clone(docs)}
	return nil
}

func (x siteIndexView) docs() []connector.IndexDocument {
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	if ix := x.s.indexes[x.site]; ix != nil {
		return ix.docs
	}
	return nil
}

func (x siteIndexView) Search(_ context.Context, query string, kinds []string, limit int) ([]connector.IndexHit, error) {
	terms := connector.SearchTerms(query)
	if len(terms) == 0 || limit <= 0 {
		return nil, nil
	}
	var hits []connector.IndexHit
	for _, d := range x.docs() {
		if len(kinds) > 0 && !slices.Contains(kinds, d.Kind) {
			continue
		}
		fields := [3][]string{connector.SearchTerms(d.Keywords + " " + d.Name), wordsOf(d.Title), wordsOf(d.Body)}
		weights := [3]float64{1, 0.4, 0.1}
		rank, matched := 0.0, 0
		for _, t := range terms {
			hit := false
			for i, words := range fields {
				for _, w := range words {
					if strings.HasPrefix(w, t) {
						rank += weights[i]
						hit = true
					}
				}
			}
			if hit {
				matched++
			}
		}
		if matched > 0 {
			hits = append(hits, connector.IndexHit{Document: d, Rank: rank, AllTerms: matched == len(terms)})
		}
	}
	slices.SortStableFunc(hits, func(a, b connector.IndexHit) int {
		switch {
		case a.AllTerms != b.AllTerms:
			if a.AllTerms {
				return -1
			}
			return 1
		case a.Rank != b.Rank:
			if a.Rank > b.Rank {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Document.Kind+"\x00"+a.Document.Name, b.Document.Kind+"\x00"+b.Document.Name)
	})
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits, nil
}

func wordsOf(s string) []string { return connector.SearchTerms(s) }

func (x siteIndexView) Document(_ context.Context, kind, name string) (connector.IndexDocument, bool, error) {
	var fold *connector.IndexDocument
	for _, d := range x.docs() {
		if d.Kind != kind {
			continue
		}
		if d.Name == name {
			return d, true, nil
		}
		if fold == nil && strings.EqualFold(d.Name, name) {
			c := d
			fold = &c
		}
	}
	if fold != nil {
		return *fold, true, nil
	}
	return connector.IndexDocument{}, false, nil
}

func (x siteIndexView) Documents(_ context.Context, kind, prefix string, limit int) ([]connector.IndexDocument, error) {
	var out []connector.IndexDocument
	p := strings.ToLower(prefix)
	for _, d := range x.docs() {
		if d.Kind == kind && strings.HasPrefix(strings.ToLower(d.Name), p) {
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b connector.IndexDocument) int { return strings.Compare(a.Name, b.Name) })
	if len(out) > limit {
		out = out[:max(limit, 0)]
	}
	return out, nil
}

func (x siteIndexView) Clear(context.Context) error {
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	delete(x.s.indexes, x.site)
	return nil
}
