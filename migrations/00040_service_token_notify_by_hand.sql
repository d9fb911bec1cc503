-- +goose Up

-- Migration 00005 promises that any change to a site's service tokens,
-- through erpgate or by hand, tells every replica at commit; its trigger
-- watched only revoked. An operator ending a token now by hand
-- (UPDATE service_tokens SET expires_at = now()) or moving it to another
-- site left every replica serving its cached entry (the old expiry, the
-- old site and its credential) for up to the cache's 30 s. The trigger now
-- watches every column that decides what a token may do (not
-- last_used_at, which each lookup writes), and a row moved to another
-- site (of a token, connection or credential) notifies both sites.

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION erpgate_notify_site_change() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    changed uuid;
BEGIN
    IF TG_TABLE_NAME = 'sites' THEN
        changed := coalesce(NEW.id, OLD.id);
    ELSIF TG_OP = 'DELETE' THEN
        changed := OLD.site_id;
    ELSE
        changed := NEW.site_id;
        IF TG_OP = 'UPDATE' AND OLD.site_id IS DISTINCT FROM NEW.site_id THEN
            PERFORM pg_notify('erpgate_invalidate', 'site:' || OLD.site_id::text);
        END IF;
    END IF;
    PERFORM pg_notify('erpgate_invalidate', 'site:' || changed::text);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

DROP TRIGGER service_tokens_notify ON service_tokens;
CREATE TRIGGER service_tokens_notify AFTER UPDATE OF revoked, expires_at, site_id, token_hash OR DELETE ON service_tokens
    FOR EACH ROW EXECUTE FUNCTION erpgate_notify_site_change();

-- +goose Down
DROP TRIGGER service_tokens_notify ON service_tokens;
CREATE TRIGGER service_tokens_notify AFTER UPDATE OF revoked OR DELETE ON service_tokens
    FOR EACH ROW EXECUTE FUNCTION erpgate_notify_site_change();

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION erpgate_notify_site_change() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    changed uuid;
BEGIN
    IF TG_TABLE_NAME = 'sites' THEN
        changed := coalesce(NEW.id, OLD.id);
    ELSIF TG_OP = 'DELETE' THEN
        changed := OLD.site_id;
    ELSE
        changed := NEW.site_id;
    END IF;
    PERFORM pg_notify('erpgate_invalidate', 'site:' || changed::text);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
