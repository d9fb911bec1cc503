-- +goose Up

-- In-flight tool calls, for the concurrency limits. A lease outlives a
-- crashed replica only until expires_at (the call budget plus a margin).
CREATE TABLE call_leases (
    id          uuid        PRIMARY KEY,
    site_id     uuid        NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    caller_key  text        NOT NULL,
    acquired_at timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);
CREATE INDEX call_leases_site_idx ON call_leases (site_id, caller_key);

-- Calls started per minute, per caller and per site (caller_key '').
CREATE TABLE call_windows (
    site_id      uuid        NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    caller_key   text        NOT NULL,
    window_start timestamptz NOT NULL,
    calls        integer     NOT NULL,
    PRIMARY KEY (site_id, caller_key, window_start)
);

-- +goose Down
DROP TABLE call_windows;
DROP TABLE call_leases;
