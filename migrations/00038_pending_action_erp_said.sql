-- +goose Up

-- What the ERP said when it refused an approved write (its own words,
-- toolerr.Error.ERPSaid), next to error_message, which keeps the words the
-- model was told. The approval page showed error_message, so a person read
-- "What Frappe/ERPNext answered: the ERP refused the change
-- (ValidationError): …". Actions failed before this have none: the page
-- then says in plain words what kind of failure it was.
ALTER TABLE pending_actions ADD COLUMN erp_said text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE pending_actions DROP COLUMN erp_said;
