//go:build dev

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
)

// `erpgate dev` also runs, for each connector whose demo brings one, a
// simulator that no site uses, so a person can walk self-service
// registration locally: sign in to the simulator as its administrator,
// create the OAuth client there, and register it at /register (the demo
// sites' simulators are registered already, and an address is registered
// once). Their addresses move with ERPGATE_DEV_<KIND>_REGISTER_ADDR. What
// a demo saves (the OAuth clients created on them) is kept in .data/ and
// given back at the next start, so a site registered against them keeps
// working.
const devRegistrationClientsFile = "dev-registration-clients.json"

// demoSaved is what the demos saved, by kind, as kept in .data/
// ({"frappe": [...], "acumatica": [...]}).
type demoSaved struct {
	mu    sync.Mutex
	path  string
	kinds map[string]json.RawMessage
}

func loadDemoSaved(path string) (*demoSaved, error) {
	s := &demoSaved{path: path, kinds: map[string]json.RawMessage{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &s.kinds); err != nil {
		return nil, fmt.Errorf("read %s: %w (delete it to forget the registration simulators' OAuth clients)", path, err)
	}
	return s, nil
}

// of is what kind's demo saved in an earlier run, nil if nothing.
func (s *demoSaved) of(kind string) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kinds[kind]
}

// saver is kind's DemoEnv.Save. A failure loses only the convenience of
// keeping what the demo saved, so it is reported and dev goes on.
func (s *demoSaved) saver(kind string) func(any) {
	return func(v any) {
		b, err := json.Marshal(v)
		s.mu.Lock()
		defer s.mu.Unlock()
		if err == nil {
			s.kinds[kind] = b
			err = writeJSONFile(s.path, s.kinds, 0o600)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "erpgate dev: keep what the %s demo saved: %v\n", kind, err)
		}
	}
}
