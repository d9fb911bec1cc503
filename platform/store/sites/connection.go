package sites

import (
	"regexp"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// ConnectionType says how erpgate authenticates to a site.
type ConnectionType string

// The connection types of the schema's connections_type_check.
const (
	// ConnectionAPIToken is a fixed credential of a dedicated ERP user, used
	// by service clients on /service/mcp.
	ConnectionAPIToken ConnectionType = "api_token"
	// ConnectionOAuth is an OAuth client on the ERP; users sign in as
	// themselves.
	ConnectionOAuth ConnectionType = "oauth"
)

// ConnectionTypes lists every connection type.
var ConnectionTypes = []ConnectionType{ConnectionAPIToken, ConnectionOAuth}

// Valid reports whether t is a known connection type.
func (t ConnectionType) Valid() bool { return t == ConnectionAPIToken || t == ConnectionOAuth }

// Connection describes one way of authenticating to a site. It never holds
// secret values: Fields only names the stored fields.
type Connection struct {
	ID     uuid.UUID
	SiteID uuid.UUID
	Type   ConnectionType
	// VerifiedIdentity is the ERP identity the credential authenticated as
	// when it was verified before saving.
	VerifiedIdentity string
	// Fields names the stored credential fields, sorted.
	Fields    []string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// fieldNamePattern matches credential field names (api_key, client_secret).
var fieldNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// maxFieldBytes bounds one credential value; ERP keys and secrets are far
// shorter, and the bound keeps a careless paste out of the database.
const maxFieldBytes = 8 << 10

// credentialAD is the additional data that binds a sealed credential to its
// site, connection type and field: a ciphertext moved anywhere else fails
// to open.
func credentialAD(siteID uuid.UUID, typ ConnectionType, field string) []byte {
	return secrets.AdditionalData("credential", siteID.String(), string(typ), field)
}
