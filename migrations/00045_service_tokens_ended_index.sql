-- +goose NO TRANSACTION
-- +goose Up

-- The site owner's page lists a site's 20 service tokens that ended
-- (revoked or expired, whichever came first) last. Only the index on
-- (site_id, created_at) served it, so every ended token of the site was
-- read and sorted for those 20: thousands for an owner who issues and
-- revokes in a loop. This index holds the tokens of a site in the page's
-- order (sites.recentEndedTokens), so the page reads them backwards from
-- the latest to end and stops after 20, passing over at most the site's
-- active tokens that expire in the future, which the per-site bound keeps
-- few (never-expiring active ones come last, with no end).
--
-- Built in its own statement, outside a transaction, as 00011 and 00026:
-- it blocks only writes to service_tokens (issuing, revoking and the
-- per-minute last_used_at) while it reads the table, never reads, and the
-- token lookup on /service/mcp goes on; not CONCURRENTLY, for the reason
-- 00011 gives. It may run again after a failure (IF NOT EXISTS), and the
-- drop waits at most 5 s for its lock, so that it never queues the token
-- lookups behind a long transaction.
CREATE INDEX IF NOT EXISTS service_tokens_site_ended_idx
    ON service_tokens (site_id, least(revoked_at, expires_at) DESC NULLS LAST, created_at DESC, id DESC);

-- +goose Down
-- +goose StatementBegin
DO $$
BEGIN
    PERFORM set_config('lock_timeout', '5s', true);
    DROP INDEX IF EXISTS service_tokens_site_ended_idx;
END $$;
-- +goose StatementEnd
