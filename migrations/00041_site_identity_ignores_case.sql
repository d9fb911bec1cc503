-- +goose Up

-- One site per base URL and identity key, the key compared without regard
-- to case as the base URL's path already is: Acumatica's tenant login
-- names ignore case (as the /mcp chooser compares them), so "Demo" and
-- "DEMO" at one instance are one tenant, and registering it twice under
-- two spellings made two sites of one tenant.
--
-- A deployment that already holds two sites of one tenant spelt in two
-- cases cannot get the index: the migration stops naming them, and the
-- operator deletes one (or corrects its tenant) before starting again.

-- +goose StatementBegin
DO $$
DECLARE
    clash text;
BEGIN
    SELECT string_agg(slugs, '; ') INTO clash FROM (
        SELECT string_agg(slug, ', ' ORDER BY slug) AS slugs
        FROM sites GROUP BY lower(base_url), lower(identity_key) HAVING count(*) > 1
    ) AS c;
    IF clash IS NOT NULL THEN
        RAISE EXCEPTION 'these sites are one ERP tenant with its name spelt in different cases: %; delete one of each group (or change its tenant), then start erpgate again', clash;
    END IF;
END
$$;
-- +goose StatementEnd

DROP INDEX sites_base_url_identity_key;
CREATE UNIQUE INDEX sites_base_url_identity_key ON sites ((lower(base_url)), (lower(identity_key)));

-- +goose Down
DROP INDEX sites_base_url_identity_key;
CREATE UNIQUE INDEX sites_base_url_identity_key ON sites ((lower(base_url)), identity_key);
