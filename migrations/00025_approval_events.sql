-- +goose Up

-- Writes with approval (platform/store/approval) add two kinds of actor to the
-- audit: erp_user, a person approving or rejecting a write on erpgate's
-- page, and mcp_client, the client whose call proposed or ran it. The
-- tools/call usage event of a write tool says which stage of the approval
-- it was (proposed, executed, failed, refused); the page's decisions are
-- usage events of method approval (approved, rejected). '' for reads.
ALTER TABLE admin_events DROP CONSTRAINT admin_events_actor_kind_check;
ALTER TABLE admin_events ADD CONSTRAINT admin_events_actor_kind_check
    CHECK (actor_kind IN ('operator', 'erp_admin', 'registrant', 'erp_user', 'mcp_client'));

ALTER TABLE usage_events ADD COLUMN approval text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE usage_events DROP COLUMN approval;
DELETE FROM admin_events WHERE actor_kind IN ('erp_user', 'mcp_client');
ALTER TABLE admin_events DROP CONSTRAINT admin_events_actor_kind_check;
ALTER TABLE admin_events ADD CONSTRAINT admin_events_actor_kind_check
    CHECK (actor_kind IN ('operator', 'erp_admin', 'registrant'));
