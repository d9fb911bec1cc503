-- +goose Up

-- The network a registration was started from (web/register): its
-- source's IPv4 /24 or IPv6 /48, never the address. One network may keep
-- only a few registrations waiting to be finished, counted with the
-- deployment's bound under its lock, so that a handful of one network's
-- addresses cannot fill that bound. Rows from before have none ('').
ALTER TABLE pending_registrations ADD COLUMN source_network text NOT NULL DEFAULT '';
CREATE INDEX pending_registrations_network_idx ON pending_registrations (source_network) WHERE stage = 'client';

-- +goose Down
DROP INDEX pending_registrations_network_idx;
ALTER TABLE pending_registrations DROP COLUMN source_network;
