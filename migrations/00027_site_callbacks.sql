-- +goose Up

-- Each site has a redirect URI of its own, <base>/sites/<slug>/oauth/callback,
-- so that a code an ERP sends back is only ever exchanged with that ERP
-- (the mix-up attack, RFC 9700 section 4.4: with one redirect URI for
-- every site, a site an attacker registered could make a person's honest
-- ERP send its code back to a sign-in that erpgate then finished at the
-- attacker's ERP). Sites registered before keep the shared
-- <base>/oauth/callback (shared_callback) until the operator switches
-- them, after adding the new redirect URI to the ERP's OAuth client.
ALTER TABLE sites ADD COLUMN shared_callback boolean NOT NULL DEFAULT true;
ALTER TABLE sites ALTER COLUMN shared_callback SET DEFAULT false;

-- A registration's site name is chosen when it begins, so the page can
-- give its redirect URI before the site exists. Registrations begun
-- before have none ('') and use the shared redirect URI.
ALTER TABLE pending_registrations ADD COLUMN slug text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE pending_registrations DROP COLUMN slug;
ALTER TABLE sites DROP COLUMN shared_callback;
