-- +goose Up

-- erpgate_call_release gave back a caller's unused reservation by updating
-- the caller's row alone, and a lease by updating the site's row and then
-- the caller's. In a batch with both, sorted by (site, caller), a caller's
-- row could be locked before its site's row; an acquisition locks the site's
-- row first, so the two could deadlock (seen under load: PostgreSQL aborted
-- the acquisition with "deadlock detected"). Now the site's row is locked
-- before anything else of that site in the batch, so every function locks
-- rows in key order: the site's row, then callers' rows.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION erpgate_call_release(
    p_sites uuid[], p_callers text[], p_leases uuid[], p_unused integer[], p_windows timestamptz[])
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1..coalesce(cardinality(p_sites), 0) LOOP
        IF i = 1 OR p_sites[i] IS DISTINCT FROM p_sites[i - 1] THEN
            PERFORM 1 FROM call_limits WHERE site_id = p_sites[i] AND caller_key = '' FOR UPDATE;
        END IF;
        IF p_leases[i] IS NOT NULL THEN
            UPDATE call_limits SET leases = array_remove(leases, p_leases[i])
             WHERE site_id = p_sites[i] AND caller_key = '';
        END IF;
        IF p_callers[i] <> '' AND (p_leases[i] IS NOT NULL OR p_unused[i] > 0) THEN
            UPDATE call_limits
               SET leases = CASE WHEN p_leases[i] IS NULL THEN leases ELSE array_remove(leases, p_leases[i]) END,
                   window_calls = CASE WHEN window_start = p_windows[i] THEN greatest(window_calls - p_unused[i], 0) ELSE window_calls END
             WHERE site_id = p_sites[i] AND caller_key = p_callers[i];
        ELSIF p_callers[i] = '' AND p_unused[i] > 0 THEN
            UPDATE call_limits SET window_calls = greatest(window_calls - p_unused[i], 0)
             WHERE site_id = p_sites[i] AND caller_key = '' AND window_start = p_windows[i];
        END IF;
    END LOOP;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION erpgate_call_release(
    p_sites uuid[], p_callers text[], p_leases uuid[], p_unused integer[], p_windows timestamptz[])
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1..coalesce(cardinality(p_sites), 0) LOOP
        IF p_leases[i] IS NOT NULL THEN
            UPDATE call_limits SET leases = array_remove(leases, p_leases[i])
             WHERE site_id = p_sites[i] AND caller_key = '';
        END IF;
        IF p_callers[i] <> '' AND (p_leases[i] IS NOT NULL OR p_unused[i] > 0) THEN
            UPDATE call_limits
               SET leases = CASE WHEN p_leases[i] IS NULL THEN leases ELSE array_remove(leases, p_leases[i]) END,
                   window_calls = CASE WHEN window_start = p_windows[i] THEN greatest(window_calls - p_unused[i], 0) ELSE window_calls END
             WHERE site_id = p_sites[i] AND caller_key = p_callers[i];
        ELSIF p_callers[i] = '' AND p_unused[i] > 0 THEN
            UPDATE call_limits SET window_calls = greatest(window_calls - p_unused[i], 0)
             WHERE site_id = p_sites[i] AND caller_key = '' AND window_start = p_windows[i];
        END IF;
    END LOOP;
END
$$;
-- +goose StatementEnd
