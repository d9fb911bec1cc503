-- +goose Up

-- Site-administration audit: one row per action of the site-administration
-- layer (platform/front/siteadmin), from the admin API or a site owner's page.
-- site_id has no foreign key and the slug is kept, so that the events of a
-- deleted site outlive it. actor_kind says who acted (operator: the admin
-- token; erp_admin: an ERP administrator signed in on the owner's page);
-- outcome is success or refused, with reason saying why. details holds old
-- and new values of changed settings, never a secret.
CREATE TABLE admin_events (
    id          bigserial   PRIMARY KEY,
    occurred_at timestamptz NOT NULL DEFAULT now(),
    site_id     uuid,
    site_slug   text        NOT NULL DEFAULT '',
    actor_kind  text        NOT NULL,
    actor       text        NOT NULL DEFAULT '',
    action      text        NOT NULL,
    outcome     text        NOT NULL,
    reason      text        NOT NULL DEFAULT '',
    details     jsonb       NOT NULL DEFAULT '{}'::jsonb,
    CONSTRAINT admin_events_outcome_check CHECK (outcome IN ('success', 'refused', 'error')),
    CONSTRAINT admin_events_actor_kind_check CHECK (actor_kind IN ('operator', 'erp_admin', 'registrant'))
);
CREATE INDEX admin_events_site_time_idx ON admin_events (site_id, occurred_at DESC);

-- +goose Down
DROP TABLE admin_events;
