-- +goose Up

-- When the site last moved to another tenant (its identity key changed);
-- NULL when it never has. A move hands the site to another company's
-- administrators: the owner's page shows them the site's activity and
-- service tokens from this time on, not the old tenant's (the operator's
-- console keeps everything).
ALTER TABLE sites ADD COLUMN tenant_since timestamptz;

-- +goose Down
ALTER TABLE sites DROP COLUMN tenant_since;
