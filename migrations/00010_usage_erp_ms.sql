-- +goose Up

-- How long each tool call was with the ERP (from sending each request to
-- having read its answer, overlapping requests counted once), so that a
-- slow call can be told apart from a slow ERP: duration_ms minus erp_ms is
-- erpgate's part. NULL for requests other than tools/call, and for events
-- stored before this column existed.
ALTER TABLE usage_events ADD COLUMN erp_ms integer
    CONSTRAINT usage_events_erp_ms_check CHECK (erp_ms >= 0);

-- +goose Down
ALTER TABLE usage_events DROP COLUMN erp_ms;
