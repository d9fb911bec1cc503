-- +goose Up

-- An approval can be withdrawn (platform/store/approval, Store.Withdraw):
-- the person who approved a write takes the approval back on erpgate's
-- page before a call claimed it. The action becomes withdrawn and is never
-- run; withdrawn_at says when. Withdrawal and claim are both conditional
-- UPDATEs of an approved row, so of the two racing exactly one wins.
ALTER TABLE pending_actions ADD COLUMN withdrawn_at timestamptz;
ALTER TABLE pending_actions DROP CONSTRAINT pending_actions_status_check;
ALTER TABLE pending_actions ADD CONSTRAINT pending_actions_status_check
    CHECK (status IN ('proposed', 'approved', 'rejected', 'withdrawn', 'executing', 'executed', 'failed'));

-- +goose Down
UPDATE pending_actions SET status = 'rejected' WHERE status = 'withdrawn';
ALTER TABLE pending_actions DROP CONSTRAINT pending_actions_status_check;
ALTER TABLE pending_actions ADD CONSTRAINT pending_actions_status_check
    CHECK (status IN ('proposed', 'approved', 'rejected', 'executing', 'executed', 'failed'));
ALTER TABLE pending_actions DROP COLUMN withdrawn_at;
