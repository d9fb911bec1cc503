-- +goose NO TRANSACTION
-- +goose Up

-- A tools/call usage event says what redaction took out of its result:
-- redacted_count values, in the fields named by redacted_fields (paths with
-- array positions left out, "data[].tax_id", joined by ", "). MCP4Acumatica
-- logged these as field_redaction events its log viewer could filter by;
-- erpgate's viewer filters calls with redactions through the partial index,
-- which costs an event without any nothing but its condition.
--
-- Adding a column with a constant default changes only the catalogue; the
-- lock waits at most 5 s so that it never queues the viewer's reads behind
-- a long one. The index is built as 00011 and 00026 build theirs.
-- +goose StatementBegin
DO $$
BEGIN
    PERFORM set_config('lock_timeout', '5s', true);
    ALTER TABLE usage_events ADD COLUMN IF NOT EXISTS redacted_count integer NOT NULL DEFAULT 0;
    ALTER TABLE usage_events ADD COLUMN IF NOT EXISTS redacted_fields text NOT NULL DEFAULT '';
END $$;
-- +goose StatementEnd
CREATE INDEX IF NOT EXISTS usage_events_redacted_at_idx ON usage_events (occurred_at, id) WHERE redacted_count > 0;

-- +goose Down
DROP INDEX IF EXISTS usage_events_redacted_at_idx;
-- +goose StatementBegin
DO $$
BEGIN
    PERFORM set_config('lock_timeout', '5s', true);
    ALTER TABLE usage_events DROP COLUMN IF EXISTS redacted_fields;
    ALTER TABLE usage_events DROP COLUMN IF EXISTS redacted_count;
END $$;
-- +goose StatementEnd
