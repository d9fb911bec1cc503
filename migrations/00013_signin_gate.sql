-- +goose Up

-- When a sign-in's callback arrived in a browser that lacks the flow's
-- cookie, the flow is burned: it is done, and the original browser is told
-- that the sign-in was ended and must be started again. NULL otherwise.
ALTER TABLE oauth_signin_flows ADD COLUMN burned_at timestamptz;

-- When the connector's access gate (Acumatica's canary inquiry) last let
-- the user in: at sign-in, then on an ERP token refresh at most once per
-- ERPGATE_OAUTH_ACCESS_GATE_INTERVAL. NULL for tokens stored before this
-- column existed (checked at their next refresh).
ALTER TABLE upstream_tokens ADD COLUMN gate_checked_at timestamptz;

-- +goose Down
ALTER TABLE upstream_tokens DROP COLUMN gate_checked_at;
ALTER TABLE oauth_signin_flows DROP COLUMN burned_at;
