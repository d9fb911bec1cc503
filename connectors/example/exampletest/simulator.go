// Package exampletest simulates Example ERP, the fictional ERP of the
// example connector (docs/connectors.md). Its whole API:
//
//	GET /api/me                    who the API key belongs to: {"user": "..."}
//	GET /api/customers?offset&limit {"customers": [...], "total": n}, by id
//	GET /api/customers/{id}        {"customer": {...}}
//
// Every request needs "Authorization: Key <api key>"; a wrong or missing
// key is 401, an unknown customer 404, a limit over 100 or a bad number 400,
// each with {"error": "<sentence>"}.
package exampletest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
)

// MaxLimit is the most customers one list request returns.
const MaxLimit = 100

// Customer is one customer of the seed.
type Customer struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	City    string `json:"city"`
	Balance string `json:"balance"` // a decimal, as the ERP sends it
}

// Simulator is Example ERP with its seed: one service user and a dozen
// customers, the same on every run.
type Simulator struct {
	// User is the service user, APIKey its key.
	User, APIKey string
	customers    []Customer
}

// New returns a simulator with the seed.
func New() *Simulator {
	s := &Simulator{User: "service@example.test", APIKey: "ex-key-7f3a9c"}
	cities := []string{"Wellington", "Auckland", "Christchurch", "Dunedin"}
	for i := 1; i <= 12; i++ {
		s.customers = append(s.customers, Customer{
			ID:      fmt.Sprintf("C%03d", i),
			Name:    fmt.Sprintf("Customer %d Ltd", i),
			City:    cities[i%len(cities)],
			Balance: fmt.Sprintf("%d.%02d", i*150, i*7%100),
		})
	}
	return s
}

// Customers returns the seed's customers, by id.
func (s *Simulator) Customers() []Customer { return append([]Customer(nil), s.customers...) }

// ServeHTTP is the ERP's API.
func (s *Simulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		fail(w, http.StatusMethodNotAllowed, "only GET is supported")
		return
	}
	if r.Header.Get("Authorization") != "Key "+s.APIKey {
		fail(w, http.StatusUnauthorized, "no valid API key was sent")
		return
	}
	switch path := r.URL.Path; {
	case path == "/api/me":
		reply(w, map[string]string{"user": s.User})
	case path == "/api/customers":
		s.list(w, r)
	case strings.HasPrefix(path, "/api/customers/"):
		id := strings.TrimPrefix(path, "/api/customers/")
		for _, c := range s.customers {
			if c.ID == id {
				reply(w, map[string]Customer{"customer": c})
				return
			}
		}
		fail(w, http.StatusNotFound, "no customer "+id)
	default:
		fail(w, http.StatusNotFound, "no such endpoint")
	}
}

func (s *Simulator) list(w http.ResponseWriter, r *http.Request) {
	offset, err := number(r, "offset", 0)
	if err != nil {
		fail(w, http.StatusBadRequest, err.Error())
		return
	}
	limit, err := number(r, "limit", 20)
	if err != nil || limit < 1 || limit > MaxLimit {
		fail(w, http.StatusBadRequest, fmt.Sprintf("limit must be a number from 1 to %d", MaxLimit))
		return
	}
	page := []Customer{}
	if offset < len(s.customers) {
		page = s.customers[offset:min(offset+limit, len(s.customers))]
	}
	reply(w, map[string]any{"customers": page, "total": len(s.customers)})
}

func number(r *http.Request, name string, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s must be a whole number of at least 0", name)
	}
	return n, nil
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// NewServer runs a simulator on a loopback port; Close the server when
// done.
func NewServer() (*Simulator, *httptest.Server) {
	s := New()
	return s, httptest.NewServer(s)
}
