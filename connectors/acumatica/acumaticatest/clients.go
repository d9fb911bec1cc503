package acumaticatest

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
)

// OAuth flows of a Connected Application (SM303010): each application is
// registered for one flow.
const (
	FlowAuthorizationCode = "authorization_code"
	FlowPassword          = "password" // Resource Owner Password Credentials
)

// Client is a Connected Application. ID has the form "<GUID>@<Tenant>".
type Client struct {
	ID string
	// Name is the Client Name shown on SM303010 and the consent page.
	Name string
	// Secret is the shared secret's value, shown once when it is added.
	Secret       string
	RedirectURIs []string
	Flow         string
}

// Default clients: one for the interactive authorization-code flow, one
// for service connections (password grant).
const (
	DefaultCodeClientGUID    = "2C8A6E3D-1B4F-4E0A-9D7C-5F3B8A1E6C24"
	DefaultCodeClientSecret  = "Xq2rT9vLmN4pW7sK1bZ3cD8e"
	DefaultCodeRedirectURI   = "http://localhost:8080/callback"
	DefaultServiceClientGUID = "7F1E0B9A-3C2D-4B5E-8A6F-0D1C2B3A4E5F"
	DefaultServiceSecret     = "Sv4uR8wY2zA6cE0gI3kM5oQ7"
)

func defaultClients(tenant string) []Client {
	return []Client{
		{ID: DefaultCodeClientGUID + "@" + tenant, Name: "Demo sign-in", Secret: DefaultCodeClientSecret,
			RedirectURIs: []string{DefaultCodeRedirectURI}, Flow: FlowAuthorizationCode},
		{ID: DefaultServiceClientGUID + "@" + tenant, Name: "Demo service connections", Secret: DefaultServiceSecret, Flow: FlowPassword},
	}
}

// Clients returns the registered Connected Applications.
func (s *Simulator) Clients() []Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Client, len(s.clients))
	for i, c := range s.clients {
		out[i] = c
		out[i].RedirectURIs = slices.Clone(c.RedirectURIs)
	}
	return out
}

// RegisterClient registers an authorization-code application with the
// given redirect URIs (matched exactly) and returns it with a fresh
// GUID@Tenant ID and secret.
func (s *Simulator) RegisterClient(redirectURIs ...string) Client {
	return s.register(Client{RedirectURIs: slices.Clone(redirectURIs), Flow: FlowAuthorizationCode})
}

// RegisterServiceClient registers a Resource Owner Password application,
// the kind service connections use.
func (s *Simulator) RegisterServiceClient() Client {
	return s.register(Client{Flow: FlowPassword})
}

// AddClient registers a Connected Application as an administrator does on
// SM303010: the client ID (GUID@Tenant) is generated when c.ID is empty,
// and the shared secret's value when c.Secret is empty; an application
// with the same ID is replaced. Flow defaults to the authorization code
// flow.
func (s *Simulator) AddClient(c Client) Client {
	if c.Flow == "" {
		c.Flow = FlowAuthorizationCode
	}
	c.RedirectURIs = slices.Clone(c.RedirectURIs)
	return s.register(c)
}

func (s *Simulator) register(c Client) Client {
	if c.ID == "" {
		var b [16]byte
		_, _ = rand.Read(b[:])
		c.ID = strings.ToUpper(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])) + "@" + s.tenant
	}
	if c.Secret == "" {
		var sec [18]byte
		_, _ = rand.Read(sec[:])
		c.Secret = base64.RawURLEncoding.EncodeToString(sec[:])
	}
	s.mu.Lock()
	i := slices.IndexFunc(s.clients, func(old Client) bool { return strings.EqualFold(old.ID, c.ID) })
	if i >= 0 {
		s.clients[i] = c
	} else {
		s.clients = append(s.clients, c)
	}
	s.mu.Unlock()
	if s.opts.ClientAdded != nil {
		s.opts.ClientAdded(c)
	}
	return c
}

// clientByID finds a client; the GUID part is case-insensitive, the
// tenant suffix must name this instance's tenant.
func (s *Simulator) clientByID(id string) *Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.clients {
		if strings.EqualFold(s.clients[i].ID, id) {
			c := s.clients[i]
			return &c
		}
	}
	return nil
}

// ServiceLogin is what an operator registers for a bot's service
// connection to this simulator: the tenant, the password-grant application
// and the dedicated API user.
type ServiceLogin struct {
	Tenant       string
	ClientID     string
	ClientSecret string
	Username     string
	Password     string
}

// ServiceLogin returns the default service connection: the first
// password-grant application and the "service" API user.
func (s *Simulator) ServiceLogin() ServiceLogin {
	login := ServiceLogin{Tenant: s.Tenant()}
	for _, c := range s.Clients() {
		if c.Flow == FlowPassword {
			login.ClientID, login.ClientSecret = c.ID, c.Secret
			break
		}
	}
	u := s.User("service")
	login.Username, login.Password = u.Username, u.Password
	return login
}
