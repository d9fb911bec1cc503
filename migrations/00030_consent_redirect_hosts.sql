-- +goose Up

-- A consent covers the hosts its consent page named as receiving the
-- answer (the redirect URI's host; a loopback host, localhost included,
-- without its port), not every redirect URI the client has registered or
-- may later list in its metadata document. Consents given before name no
-- host, so each is asked for once more.
ALTER TABLE oauth_consents ADD COLUMN redirect_hosts text[] NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE oauth_consents DROP COLUMN redirect_hosts;
