package livesettings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/infra/database"
)

// NotifyPrefix begins the notifications of a settings change on the
// invalidation channel; the rest is the new version.
const NotifyPrefix = "settings:"

// Values are the deployment's settings in force.
type Values struct {
	RedactionAdd, RedactionSkip []string
	MaxRecords                  int
	UserConcurrency             int
	UserPerMinute               int
	SiteConcurrency             int
	SitePerMinute               int
	CanaryInquiry               string
}

// Defaults are the values in force where nothing is stored: the
// environment's (platform/infra/config).
type Defaults = Values

func (d Defaults) byName() map[string]any {
	nz := func(l []string) []string {
		if l == nil {
			return []string{}
		}
		return l
	}
	return map[string]any{
		RedactionAdd: nz(d.RedactionAdd), RedactionSkip: nz(d.RedactionSkip),
		MaxRecords: d.MaxRecords, UserConcurrency: d.UserConcurrency, UserPerMinute: d.UserPerMinute,
		SiteConcurrency: d.SiteConcurrency, SitePerMinute: d.SitePerMinute, CanaryInquiry: d.CanaryInquiry,
		Tools: []string{}, ReadOnly: false,
	}
}

// SiteValues are one site's own settings: its redaction patterns (in
// addition to the deployment's), the tools it offers (empty: all), its
// read-only switch, its row cap, its call ceilings and its write policy.
type SiteValues struct {
	RedactionAdd, RedactionSkip []string
	Tools                       []string
	ReadOnly                    bool
	// MaxRecords is the site's own cap on the rows of one upstream query;
	// 0 where it has none. The lower of it and the deployment's applies.
	MaxRecords int
	// SiteConcurrency and SitePerMinute are the site's own call ceilings;
	// 0 where it has none, and the deployment's apply.
	SiteConcurrency, SitePerMinute int
	// WriteTools are the write tools the site enables (none by default);
	// ServiceWrites lets service tokens propose them, each approved by
	// ServiceWriteApprover (an ERP user of the site).
	WriteTools           []string
	ServiceWrites        bool
	ServiceWriteApprover string
}

// Stored is a value an operator set.
type Stored struct {
	Value     any
	UpdatedAt time.Time
}

type key struct {
	site uuid.UUID
	name string
}

// Snapshot is the settings in force at one version. It is immutable.
type Snapshot struct {
	Version    int64
	Deployment Values
	// Sites holds the sites that have settings of their own.
	Sites    map[uuid.UUID]SiteValues
	stored   map[key]Stored
	defaults map[string]any
}

// Site returns site's own settings (the zero SiteValues when it has none).
func (s *Snapshot) Site(site uuid.UUID) SiteValues { return s.Sites[site] }

// Source says where a value in force comes from.
type Source string

// The sources.
const (
	SourceDefault    Source = "default"
	SourceDeployment Source = "deployment"
	SourceSite       Source = "site"
)

// Effective returns the value of name in force for site (uuid.Nil: the
// deployment) and where it comes from: the site's own value, the
// deployment's stored value, or the default. For an additive setting a
// site's value is its own addition only (empty by default); the
// deployment's value applies as well (Effective with uuid.Nil).
func (s *Snapshot) Effective(site uuid.UUID, name string) (any, Source, time.Time) {
	if site != uuid.Nil {
		if v, ok := s.stored[key{site, name}]; ok {
			return v.Value, SourceSite, v.UpdatedAt
		}
		if d, _ := Lookup(name); d.Scope&Deployment == 0 || d.Additive {
			if d.Additive {
				return []string{}, SourceDefault, time.Time{}
			}
			return s.defaults[name], SourceDefault, time.Time{}
		}
	}
	if v, ok := s.stored[key{uuid.Nil, name}]; ok {
		return v.Value, SourceDeployment, v.UpdatedAt
	}
	return s.defaults[name], SourceDefault, time.Time{}
}

// InForce returns, for a setting whose site value only lowers the
// deployment's (Def.LowersOnly), the value that applies to site: the
// lower of the site's own and the deployment's, as the engine applies
// them (a site's own may be above the deployment's when the operator
// lowered the deployment's later). ok is false for any other setting, or
// for the deployment (uuid.Nil), where Effective's value applies.
func (s *Snapshot) InForce(site uuid.UUID, name string) (v any, ok bool) {
	if d, _ := Lookup(name); !d.LowersOnly || site == uuid.Nil {
		return nil, false
	}
	dep, _, _ := s.Effective(uuid.Nil, name)
	own, _, _ := s.Effective(site, name)
	if n, isInt := own.(int); isInt {
		if m, isInt := dep.(int); isInt && m < n {
			return m, true
		}
	}
	return own, true
}

// Stored returns the value stored for name at site (uuid.Nil: the
// deployment), if any.
func (s *Snapshot) Stored(site uuid.UUID, name string) (Stored, bool) {
	v, ok := s.stored[key{site, name}]
	return v, ok
}

func build(version int64, defaults map[string]any, stored map[key]Stored) *Snapshot {
	snap := &Snapshot{Version: version, Sites: map[uuid.UUID]SiteValues{}, stored: stored, defaults: defaults}
	get := func(name string) any { v, _, _ := snap.Effective(uuid.Nil, name); return v }
	snap.Deployment = Values{
		RedactionAdd: get(RedactionAdd).([]string), RedactionSkip: get(RedactionSkip).([]string),
		MaxRecords: get(MaxRecords).(int), UserConcurrency: get(UserConcurrency).(int), UserPerMinute: get(UserPerMinute).(int),
		SiteConcurrency: get(SiteConcurrency).(int), SitePerMinute: get(SitePerMinute).(int), CanaryInquiry: get(CanaryInquiry).(string),
	}
	for k, v := range stored {
		if k.site == uuid.Nil {
			continue
		}
		sv := snap.Sites[k.site]
		switch k.name {
		case RedactionAdd:
			sv.RedactionAdd = v.Value.([]string)
		case RedactionSkip:
			sv.RedactionSkip = v.Value.([]string)
		case Tools:
			sv.Tools = v.Value.([]string)
		case ReadOnly:
			sv.ReadOnly = v.Value.(bool)
		case MaxRecords:
			sv.MaxRecords = v.Value.(int)
		case SiteConcurrency:
			sv.SiteConcurrency = v.Value.(int)
		case SitePerMinute:
			sv.SitePerMinute = v.Value.(int)
		case WriteTools:
			sv.WriteTools = v.Value.([]string)
		case ServiceWrites:
			sv.ServiceWrites = v.Value.(bool)
		case ServiceWriteApprover:
			sv.ServiceWriteApprover = v.Value.(string)
		}
		snap.Sites[k.site] = sv
	}
	return snap
}

// Store reads and changes the live settings. It is safe for concurrent
// use.
type Store struct {
	pool     *pgxpool.Pool
	defaults map[string]any
	log      *zap.Logger
	cur      atomic.Pointer[Snapshot]

	reload sync.Mutex
	mu     sync.Mutex
	subs   []func(*Snapshot)
	// loading is set while a load that a notification asked for runs;
	// again, when another notification came meanwhile (Notified).
	loading, again bool
}

// New returns a store whose snapshot holds the defaults until Load.
func New(pool *pgxpool.Pool, d Defaults, log *zap.Logger) *Store {
	if log == nil {
		log = zap.NewNop()
	}
	s := &Store{pool: pool, defaults: d.byName(), log: log.Named("livesettings")}
	s.cur.Store(build(-1, s.defaults, map[key]Stored{}))
	return s
}

// Current returns the snapshot in force: one atomic load.
func (s *Store) Current() *Snapshot { return s.cur.Load() }

// Fresh returns the snapshot in force once the settings' version has been
// read from Postgres (and the settings too, when another replica changed
// them since): what a page or an answer shows right after a change is
// that change, whichever replica made it. Tool calls use Current, which
// follows within a second. When Postgres cannot be read it logs that and
// returns Current.
func (s *Store) Fresh(ctx context.Context) *Snapshot {
	if err := s.Load(ctx); err != nil {
		s.log.Warn("read the settings; showing this replica's", zap.Error(err))
	}
	return s.Current()
}

// OnChange calls fn with every new snapshot, and once now with the
// current one. Register before Load and Run.
func (s *Store) OnChange(fn func(*Snapshot)) {
	s.mu.Lock()
	s.subs = append(s.subs, fn)
	s.mu.Unlock()
	fn(s.Current())
}

// Load reads the settings from Postgres and makes them current if they are
// newer than the snapshot in force.
func (s *Store) Load(ctx context.Context) error {
	s.reload.Lock()
	defer s.reload.Unlock()
	var version int64
	if err := s.pool.QueryRow(ctx, `SELECT version FROM live_settings_version`).Scan(&version); err != nil {
		return fmt.Errorf("livesettings: read version: %w", database.Classify(err))
	}
	if version <= s.Current().Version {
		return nil
	}
	rows, err := s.pool.Query(ctx, `SELECT site_id, name, value, updated_at FROM live_settings`)
	if err != nil {
		return fmt.Errorf("livesettings: read settings: %w", database.Classify(err))
	}
	stored := map[key]Stored{}
	for rows.Next() {
		var site *uuid.UUID
		var name string
		var raw []byte
		var at time.Time
		if err := rows.Scan(&site, &name, &raw, &at); err != nil {
			rows.Close()
			return fmt.Errorf("livesettings: read settings: %w", database.Classify(err))
		}
		d, ok := Lookup(name)
		if !ok {
			continue // a setting a newer release knows
		}
		v, err := d.decode(raw)
		if err != nil {
			s.log.Warn("stored setting ignored", zap.String("setting", name), zap.Error(err))
			continue
		}
		k := key{name: name}
		if site != nil {
			k.site = *site
		}
		stored[k] = Stored{Value: v, UpdatedAt: at}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("livesettings: read settings: %w", database.Classify(err))
	}
	snap := build(version, s.defaults, stored)
	s.cur.Store(snap)
	s.mu.Lock()
	subs := s.subs
	s.mu.Unlock()
	for _, fn := range subs {
		fn(snap)
	}
	s.log.Debug("settings loaded", zap.Int64("version", version))
	return nil
}

// Notified handles a settings notification (the text after
// NotifyPrefix): it loads the settings unless they are current already.
// It returns at once: the invalidation listener calling it must go on
// delivering the notifications behind this one (a revocation must not
// wait while the settings load on a busy pool). One load runs at a time
// in the background; a notification during it makes another follow.
func (s *Store) Notified(rest string) {
	if v, err := strconv.ParseInt(rest, 10, 64); err == nil && v <= s.Current().Version {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loading {
		s.again = true
		return
	}
	s.loading = true
	go s.loadNotified()
}

// loadNotified loads the settings until no notification came during the
// last load.
func (s *Store) loadNotified() {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := s.Load(ctx); err != nil {
			s.log.Warn("load settings after a notification", zap.Error(err))
		}
		cancel()
		s.mu.Lock()
		if !s.again {
			s.loading = false
			s.mu.Unlock()
			return
		}
		s.again = false
		s.mu.Unlock()
	}
}

// ErrNoSite means the site does not exist (any more).
var ErrNoSite = errors.New("livesettings: the site does not exist")

// ErrScope means the setting cannot be set where it was asked to be.
var ErrScope = errors.New("livesettings: the setting cannot be set there")

// Set stores value (as Def.Parse made it) for name at site (uuid.Nil: the
// deployment), or removes the stored value when value is nil, so that the
// default (or the deployment's value) applies again. It returns the value
// in force before and after, and applies the change on this replica
// before it returns; the others follow on the notification.
func (s *Store) Set(ctx context.Context, site uuid.UUID, name string, value any) (before, after any, err error) {
	return s.set(ctx, false, site, name, value)
}

// ErrOperatorDisabled means the site's owner may not change its settings:
// the operator disabled the site.
var ErrOperatorDisabled = errors.New("livesettings: the operator disabled the site")

// SetByOwner is Set for site's owner: on a site the operator disabled it
// stores nothing and reports ErrOperatorDisabled, read under a lock of the
// site's row, so that a disable the owner's request did not see yet holds.
func (s *Store) SetByOwner(ctx context.Context, site uuid.UUID, name string, value any) (before, after any, err error) {
	if site == uuid.Nil {
		return nil, nil, ErrScope
	}
	return s.set(ctx, true, site, name, value)
}

func (s *Store) set(ctx context.Context, owner bool, site uuid.UUID, name string, value any) (before, after any, err error) {
	d, ok := Lookup(name)
	if !ok || (site == uuid.Nil && d.Scope&Deployment == 0) || (site != uuid.Nil && d.Scope&Site == 0) {
		return nil, nil, ErrScope
	}
	// The value before is the one in Postgres, which another replica may
	// have changed a moment ago.
	if err := s.Load(ctx); err != nil {
		return nil, nil, err
	}
	before, _, _ = s.Current().Effective(site, name)
	var sitePtr *uuid.UUID
	if site != uuid.Nil {
		sitePtr = &site
	}
	var raw []byte
	if value != nil {
		if raw, err = json.Marshal(value); err != nil {
			return nil, nil, err
		}
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if owner {
			// FOR SHARE: the operator's disable waits for this change, or
			// this sees it.
			var disabledBy string
			err := tx.QueryRow(ctx, `SELECT coalesce(disabled_by, '') FROM sites WHERE id = $1 FOR SHARE`, site).Scan(&disabledBy)
			switch {
			case database.IsNoRows(err):
				return ErrNoSite
			case err != nil:
				return err
			case disabledBy == "operator":
				return ErrOperatorDisabled
			}
		}
		if value == nil {
			_, err := tx.Exec(ctx, `DELETE FROM live_settings WHERE site_id IS NOT DISTINCT FROM $1 AND name = $2`, sitePtr, name)
			return err
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO live_settings (site_id, name, value) VALUES ($1, $2, $3)
			ON CONFLICT ((coalesce(site_id, '00000000-0000-0000-0000-000000000000'::uuid)), name)
			DO UPDATE SET value = excluded.value, updated_at = now()`, sitePtr, name, raw)
		return err
	})
	if errors.Is(err, ErrNoSite) || errors.Is(err, ErrOperatorDisabled) {
		return nil, nil, err
	}
	if err != nil {
		if _, fk := database.IsForeignKeyViolation(err); fk {
			return nil, nil, ErrNoSite
		}
		return nil, nil, fmt.Errorf("livesettings: set %s: %w", name, database.Classify(err))
	}
	if err := s.Load(ctx); err != nil {
		return nil, nil, err
	}
	after, _, _ = s.Current().Effective(site, name)
	return before, after, nil
}
