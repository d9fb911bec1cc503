-- +goose Up

-- The network a registration was started from (web/register): its
-- source's IPv4 /24 or IPv6 /48, never the address; cleared once it is
-- registered. One network may keep only a few registrations waiting to be
-- finished, counted with the deployment's bound under its lock (a count
-- over the few waiting rows, which needs no index of its own), so that a
-- handful of one network's addresses cannot fill that bound. Rows from
-- before have none ('').
ALTER TABLE pending_registrations ADD COLUMN source_network text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE pending_registrations DROP COLUMN source_network;
