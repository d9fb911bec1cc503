-- +goose Up

-- Replicas cache resolved service tokens and decrypted credentials. Any
-- change to a site, its connections, credentials or tokens — through erpgate
-- or by hand — notifies every replica at commit, so a revoked token or a
-- replaced credential stops being used within moments everywhere.

-- +goose StatementBegin
CREATE FUNCTION erpgate_notify_site_change() RETURNS trigger
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

CREATE TRIGGER sites_notify AFTER UPDATE OR DELETE ON sites
    FOR EACH ROW EXECUTE FUNCTION erpgate_notify_site_change();
CREATE TRIGGER connections_notify AFTER INSERT OR UPDATE OR DELETE ON connections
    FOR EACH ROW EXECUTE FUNCTION erpgate_notify_site_change();
CREATE TRIGGER credentials_notify AFTER INSERT OR UPDATE OR DELETE ON credentials
    FOR EACH ROW EXECUTE FUNCTION erpgate_notify_site_change();
CREATE TRIGGER service_tokens_notify AFTER UPDATE OF revoked OR DELETE ON service_tokens
    FOR EACH ROW EXECUTE FUNCTION erpgate_notify_site_change();

-- +goose Down
DROP TRIGGER service_tokens_notify ON service_tokens;
DROP TRIGGER credentials_notify ON credentials;
DROP TRIGGER connections_notify ON connections;
DROP TRIGGER sites_notify ON sites;
DROP FUNCTION erpgate_notify_site_change();
