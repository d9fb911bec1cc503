-- +goose Up

-- A lease on refreshing one user's ERP token (authserver/storage,
-- RefreshUpstreamToken): one replica refreshes at a time, the others wait
-- for the lease to go and then read the result. Before, a refresh held the
-- token's row lock, and so a pooled connection, for its whole round trip
-- to the ERP: one tenant's slow ERP could take the pool every tenant
-- shares. A lease is held without a connection. UNLOGGED: a lease only
-- matters while its replica is up; a crash loses it, which frees it.
CREATE UNLOGGED TABLE upstream_refresh_leases (
    site_id  uuid        NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    erp_user text        NOT NULL,
    lease    uuid        NOT NULL,
    until    timestamptz NOT NULL,
    PRIMARY KEY (site_id, erp_user)
);

-- +goose Down
DROP TABLE upstream_refresh_leases;
