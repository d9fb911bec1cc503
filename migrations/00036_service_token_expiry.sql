-- +goose Up

-- An optional expiry for service tokens, as fine-grained tokens elsewhere
-- have one: chosen when the token is issued (30, 90, 365 days, or never)
-- and never changed afterwards. A token issued before this migration, or
-- issued without one, has NULL: it never expires. An expired token is
-- refused on /service/mcp exactly like a revoked one
-- (sites.Store.ResolveServiceToken, servicemcp.Resolver).
ALTER TABLE service_tokens
    ADD COLUMN expires_at timestamptz,
    ADD CONSTRAINT service_tokens_expiry_after_creation CHECK (expires_at IS NULL OR expires_at > created_at);

-- +goose Down
ALTER TABLE service_tokens
    DROP CONSTRAINT service_tokens_expiry_after_creation,
    DROP COLUMN expires_at;
