-- +goose Up

-- A refused action's reason as a sentence for people (siteadmin's
-- Error.Sentence), next to reason, which keeps the admin API's words and
-- codes for operators and the audit viewer's filter. The site owner's page
-- showed reason, so an owner read "settings: invalid Acumatica settings:
-- endpoint_version …". Events stored before this have none: the page then
-- says only that the action was refused.
ALTER TABLE admin_events ADD COLUMN sentence text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE admin_events DROP COLUMN sentence;
