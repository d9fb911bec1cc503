-- +goose Up

-- Replicas cache what an OAuth MCP call needs (the access token's grant,
-- the site, the user's ERP token). Deleting an access token (a revoked
-- grant or refresh family, a rotation, a sign-in that ended, clean-up) and
-- replacing or deleting a user's ERP token notify every replica at commit
-- with 'user:<site id>:<ERP user>', so that they stop using it within
-- moments. Site changes already notify 'site:<id>' (migration 00005).

-- +goose StatementBegin
CREATE FUNCTION erpgate_notify_user_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'oauth_tokens' THEN
        IF OLD.site_id IS NOT NULL THEN
            PERFORM pg_notify('erpgate_invalidate', 'user:' || OLD.site_id::text || ':' || OLD.subject);
        END IF;
    ELSE
        PERFORM pg_notify('erpgate_invalidate', 'user:' || OLD.site_id::text || ':' || OLD.erp_user);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER oauth_access_tokens_notify AFTER DELETE ON oauth_tokens
    FOR EACH ROW WHEN (OLD.kind = 'access') EXECUTE FUNCTION erpgate_notify_user_change();
CREATE TRIGGER upstream_tokens_notify AFTER UPDATE OR DELETE ON upstream_tokens
    FOR EACH ROW EXECUTE FUNCTION erpgate_notify_user_change();

-- +goose Down
DROP TRIGGER upstream_tokens_notify ON upstream_tokens;
DROP TRIGGER oauth_access_tokens_notify ON oauth_tokens;
DROP FUNCTION erpgate_notify_user_change();
