-- +goose Up

-- Who disabled a site: 'operator' (the admin API or the console) or 'owner'
-- (an ERP administrator on the site's owner page). The owner may pause and
-- resume their site; one the operator disabled, only the operator may
-- enable, and the owner may neither change nor delete it. A site disabled
-- before this migration is the operator's unless its last status change
-- was the owner's.
ALTER TABLE sites ADD COLUMN disabled_by text;
UPDATE sites s SET disabled_by = coalesce((
    SELECT CASE e.actor_kind WHEN 'erp_admin' THEN 'owner' ELSE 'operator' END
    FROM admin_events e
    WHERE e.site_id = s.id AND e.action = 'update_site' AND e.outcome = 'success' AND e.details ? 'status'
    ORDER BY e.occurred_at DESC, e.id DESC LIMIT 1), 'operator')
WHERE s.status = 'disabled';
ALTER TABLE sites ADD CONSTRAINT sites_disabled_by_check CHECK (
    (status = 'active' AND disabled_by IS NULL) OR (status = 'disabled' AND disabled_by IN ('operator', 'owner')));

-- +goose Down
ALTER TABLE sites DROP CONSTRAINT sites_disabled_by_check;
ALTER TABLE sites DROP COLUMN disabled_by;
