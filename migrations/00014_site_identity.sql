-- +goose Up

-- What tells two sites at one base URL apart, as the site's connector
-- computes it from the settings (connector.SiteRules): Acumatica's tenant,
-- "" for a connector whose base URL is always one site (Frappe). The
-- platform writes it with every change of the settings.
ALTER TABLE sites ADD COLUMN identity_key text NOT NULL DEFAULT '';

-- Existing rows get what their connector computes: the tenant for
-- Acumatica, "" otherwise (Frappe has no tenant setting). The old index was
-- unique on exactly these values, so the new one holds on every row.
UPDATE sites SET identity_key = coalesce(settings ->> 'tenant', '') WHERE kind = 'acumatica';

-- One site per base URL (origin and virtual directory) and identity key.
-- The kind is not part of it: a base URL is one ERP instance. The path is
-- compared without regard to case, as IIS serves it (origins are stored in
-- lower case already, so existing rows are unaffected).
DROP INDEX sites_base_url_tenant_key;
CREATE UNIQUE INDEX sites_base_url_identity_key ON sites ((lower(base_url)), identity_key);

-- +goose Down
DROP INDEX sites_base_url_identity_key;
CREATE UNIQUE INDEX sites_base_url_tenant_key
    ON sites (base_url, (coalesce(settings ->> 'tenant', '')));
ALTER TABLE sites DROP COLUMN identity_key;
