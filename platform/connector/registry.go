package connector

import (
	"fmt"
	"regexp"
	"sort"
	"sync"
)

var toolNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// Registry holds the connectors a deployment serves. It refuses duplicates
// and catalogues that break the rules every tool must follow, so a broken
// catalogue stops start-up instead of reaching a client.
type Registry struct {
	mu         sync.RWMutex
	connectors map[string]Connector
	tools      map[string][]Tool
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{connectors: map[string]Connector{}, tools: map[string][]Tool{}}
}

// Register adds c. It fails if the kind is taken or the catalogue is invalid.
func (r *Registry) Register(c Connector) error {
	kind := c.Kind()
	if !toolNamePattern.MatchString(kind) {
		return fmt.Errorf("connector: register: invalid kind %q", kind)
	}
	tools := c.Tools()
	if err := ValidateCatalogue(tools); err != nil {
		return fmt.Errorf("connector: register %s: %w", kind, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.connectors[kind]; dup {
		return fmt.Errorf("connector: register: kind %q is already registered", kind)
	}
	r.connectors[kind] = c
	r.tools[kind] = tools
	return nil
}

// MustRegister is Register for start-up wiring, where failure is fatal.
func (r *Registry) MustRegister(c Connector) {
	if err := r.Register(c); err != nil {
		panic(err)
	}
}

// Get returns the connector of kind.
func (r *Registry) Get(kind string) (Connector, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	c, ok := r.connectors[kind]
	return c, ok
}

// Tools returns the catalogue registered for kind.
func (r *Registry) Tools(kind string) []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.tools[kind]
}

// Kinds returns the registered kinds, sorted.
func (r *Registry) Kinds() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	kinds := make([]string, 0, len(r.connectors))
	for k := range r.connectors {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return kinds
}

// ValidateCatalogue checks the rules every catalogue must follow: unique,
// well-formed names; a description; an input object schema; an object
// output schema; a classified effect; a handler; a preview exactly for
// the tools that write.
func ValidateCatalogue(tools []Tool) error {
	seen := map[string]bool{}
	for i, t := range tools {
		switch {
		case !toolNamePattern.MatchString(t.Name):
			return fmt.Errorf("tool %d: invalid name %q", i, t.Name)
		case seen[t.Name]:
			return fmt.Errorf("tool %s: duplicate name", t.Name)
		case t.Description == "":
			return fmt.Errorf("tool %s: no description", t.Name)
		case t.Input == nil || t.Input.Type != "object":
			return fmt.Errorf("tool %s: input schema must be an object", t.Name)
		case t.Input.AdditionalProperties != false:
			return fmt.Errorf("tool %s: input schema must reject unknown arguments", t.Name)
		case t.Output == nil || t.Output.Type != "object":
			return fmt.Errorf("tool %s: output schema must be an object", t.Name)
		case t.Effect == effectUnset || t.Effect > Destructive:
			return fmt.Errorf("tool %s: effect is not classified", t.Name)
		case t.Handler == nil:
			return fmt.Errorf("tool %s: no handler", t.Name)
		case t.Effect == Read && t.Preview != nil:
			return fmt.Errorf("tool %s: a read tool has no preview", t.Name)
		case t.Effect != Read && t.Preview == nil:
			return fmt.Errorf("tool %s: a %s tool needs a preview for its approval", t.Name, t.Effect)
		case t.Effect != Write && t.Idempotent:
			return fmt.Errorf("tool %s: only a write tool says whether it is idempotent", t.Name)
		}
		seen[t.Name] = true
	}
	return nil
}
