// Package sites owns the site registry: the registered ERP instances
// (erpgate's unit of tenancy), how erpgate authenticates to each of them
// (connections, whose secret fields are sealed at rest with the deployment's
// keyring) and the service tokens that select a site on /service/mcp.
//
// Postgres is the only state. Every tenant-scoped operation takes the site id
// explicitly and every query filters by it, so one tenant's id can never reach
// another tenant's rows. Secrets are only ever held as secrets.Secret, which
// redacts itself; no error or log line built here carries a secret value.
package sites
