-- +goose Up

-- The last preflight of each site (platform/front/siteadmin, issue 17): when it
-- ran, whether every check passed, and the checks as a JSON array of
-- {id, title, status, found, fix}. One row per site, replaced by each run;
-- it goes with its site. It never holds a secret: the checks say what was
-- found in words safe to show an operator.
CREATE TABLE site_preflight (
    site_id uuid        PRIMARY KEY REFERENCES sites (id) ON DELETE CASCADE,
    ran_at  timestamptz NOT NULL DEFAULT now(),
    passed  boolean     NOT NULL,
    checks  jsonb       NOT NULL,
    CONSTRAINT site_preflight_checks_array CHECK (jsonb_typeof(checks) = 'array')
);

-- +goose Down
DROP TABLE site_preflight;
