-- +goose Up

-- Leases on work that one replica at a time does for a site, such as
-- refreshing a user's ERP token or renewing a service connection's
-- (platform/store/leases): the others wait for the lease to go and then
-- read the result. Before, such work held a row lock or an advisory lock,
-- and so a pooled connection, for its whole round trip to the ERP: one
-- tenant's slow ERP could take the pool every tenant shares. A lease is
-- held without a connection. UNLOGGED: a lease only matters while its
-- replica is up; a crash loses it, which frees it.
CREATE UNLOGGED TABLE work_leases (
    site_id uuid        NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    key     text        NOT NULL,
    lease   uuid        NOT NULL,
    until   timestamptz NOT NULL,
    PRIMARY KEY (site_id, key)
);

-- +goose Down
DROP TABLE work_leases;
