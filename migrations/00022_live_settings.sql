-- +goose Up

-- Live settings: the operator's changes to settings whose defaults come
-- from the environment (platform/store/livesettings), for the whole deployment
-- (site_id NULL) or one site. A row is an override; no row means the
-- default. Every change bumps live_settings_version and notifies every
-- replica ('settings:<version>' on erpgate_invalidate); replicas also poll
-- the version, so a missed notification costs at most the poll interval.
CREATE TABLE live_settings (
    site_id    uuid        REFERENCES sites (id) ON DELETE CASCADE,
    name       text        NOT NULL,
    value      jsonb       NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX live_settings_key_idx
    ON live_settings ((coalesce(site_id, '00000000-0000-0000-0000-000000000000'::uuid)), name);

CREATE TABLE live_settings_version (
    one     boolean PRIMARY KEY DEFAULT true CHECK (one),
    version bigint  NOT NULL
);
INSERT INTO live_settings_version VALUES (true, 0);

-- +goose StatementBegin
CREATE FUNCTION erpgate_live_settings_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    v bigint;
BEGIN
    UPDATE live_settings_version SET version = version + 1 RETURNING version INTO v;
    PERFORM pg_notify('erpgate_invalidate', 'settings:' || v::text);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER live_settings_changed AFTER INSERT OR UPDATE OR DELETE ON live_settings
    FOR EACH STATEMENT EXECUTE FUNCTION erpgate_live_settings_changed();

-- +goose Down
DROP TRIGGER live_settings_changed ON live_settings;
DROP FUNCTION erpgate_live_settings_changed();
DROP TABLE live_settings_version;
DROP TABLE live_settings;
