-- +goose Up

-- The limiter's state, one row per (site, caller) and one per site
-- (caller_key ''), updated in place: the leases of the calls in flight and
-- the count of calls started in the current minute. It replaces
-- call_leases (a row inserted and deleted per call, counted on every
-- acquisition) and call_windows, and the per-site advisory lock: the site's
-- row lock serialises a site's acquisitions now.
--
-- Every lease is on two rows: its caller's and its site's. Rows are always
-- locked in key order, (site_id, caller_key), so the site's row ('') before
-- its callers' rows: acquisitions, releases and the limiter's janitor never
-- deadlock one another.
--
-- A lease id is a UUIDv7, whose first 48 bits are the millisecond it was
-- taken, so ids compare in time order. Leases are ended by their replica;
-- those of a crashed replica are removed by any replica's janitor once they
-- are older than the lease TTL (the call budget plus a margin), comparing
-- them with the UUID of that moment.
--
-- UNLOGGED for the reasons of migration 00006: no WAL, no flush per call;
-- after a crash the table starts empty, which loosens the limits once for
-- at most a minute. fillfactor leaves room for HOT updates, so updating a
-- row in place touches no index.
CREATE UNLOGGED TABLE call_limits (
    site_id      uuid        NOT NULL,
    caller_key   text        NOT NULL,
    leases       uuid[]      NOT NULL DEFAULT '{}',
    window_start timestamptz NOT NULL DEFAULT '-infinity',
    -- Calls counted in the window: started, or reserved by a replica for
    -- calls it will start without asking again (see erpgate_call_take).
    window_calls integer     NOT NULL DEFAULT 0,
    -- How many extra calls the last acquisition reserved (its return value;
    -- an UPDATE computes it from the row's values before the update).
    reserved     integer     NOT NULL DEFAULT 0,
    PRIMARY KEY (site_id, caller_key)
) WITH (fillfactor = 50);

-- erpgate_call_take counts one call with lease p_lease on one row, if the
-- row's limits admit it, creating the row on first use, and reserves up to
-- p_extra more calls of this minute for the replica to start without a
-- round trip (fewer if the minute's limit leaves fewer). Otherwise it
-- returns the row's counts, which show the limit that refused it.
-- +goose StatementBegin
CREATE FUNCTION erpgate_call_take(
    p_site uuid, p_key text, p_lease uuid, p_minute timestamptz,
    p_concurrency integer, p_per_minute integer, p_extra integer,
    OUT taken boolean, OUT in_flight integer, OUT calls integer, OUT granted integer)
LANGUAGE plpgsql AS $$
BEGIN
    taken := false;
    in_flight := 0;
    calls := 0;
    granted := 0;
    FOR attempt IN 1..5 LOOP
        UPDATE call_limits
           SET leases = leases || p_lease,
               reserved = least(p_extra, p_per_minute - 1 - CASE WHEN window_start = p_minute THEN window_calls ELSE 0 END),
               window_calls = CASE WHEN window_start = p_minute THEN window_calls ELSE 0 END + 1
                   + least(p_extra, p_per_minute - 1 - CASE WHEN window_start = p_minute THEN window_calls ELSE 0 END),
               window_start = p_minute
         WHERE site_id = p_site AND caller_key = p_key
           AND cardinality(leases) < p_concurrency
           AND (window_start <> p_minute OR window_calls < p_per_minute)
        RETURNING reserved INTO granted;
        IF FOUND THEN
            taken := true;
            RETURN;
        END IF;
        SELECT cardinality(leases), CASE WHEN window_start = p_minute THEN window_calls ELSE 0 END
          INTO in_flight, calls
          FROM call_limits WHERE site_id = p_site AND caller_key = p_key;
        IF NOT FOUND THEN
            in_flight := 0; -- SELECT INTO set them to NULL
            calls := 0;
            INSERT INTO call_limits (site_id, caller_key) VALUES (p_site, p_key) ON CONFLICT DO NOTHING;
        ELSIF in_flight >= p_concurrency OR calls >= p_per_minute THEN
            granted := 0;
            RETURN;
        END IF;
        -- The row was missing, or changed between the two statements (a
        -- release committed): try again.
    END LOOP;
    RAISE EXCEPTION 'erpgate_call_take: the limits row of % kept changing', p_site;
END
$$;
-- +goose StatementEnd

-- erpgate_call_acquire admits one call of p_caller on p_site, taking lease
-- p_lease, or reports which limit refused it: the site's row first, then
-- the caller's, and the call counts only if both admit it. When the
-- caller's row refuses, the site row's change is undone in the same
-- transaction, so no other transaction ever sees it. Extra calls of this
-- minute are reserved on each row as erpgate_call_take says.
--
-- p_ended are leases of this caller that its replica no longer needs
-- (finished calls whose release is queued, slots it kept for the caller's
-- next call): they are ended first, in the same transaction, so they do
-- not count against this call.
--
-- A refusal is announced on the channel erpgate_invalidate with the
-- payload "limits:<site id>:<caller key>" (caller key empty when the
-- site's own limits refused): other replicas then give back the slots and
-- reservations they hold for it and do not use, and the refused replica
-- asks again.
-- +goose StatementBegin
CREATE FUNCTION erpgate_call_acquire(
    p_site uuid, p_caller text, p_lease uuid, p_ended uuid[],
    p_user_concurrency integer, p_site_concurrency integer,
    p_user_per_minute integer, p_site_per_minute integer,
    p_user_extra integer, p_site_extra integer,
    OUT admitted boolean,
    OUT user_in_flight integer, OUT site_in_flight integer,
    OUT user_calls integer, OUT site_calls integer,
    OUT window_start timestamptz, OUT window_end timestamptz,
    OUT user_granted integer, OUT site_granted integer)
LANGUAGE plpgsql AS $$
BEGIN
    window_start := date_trunc('minute', now());
    window_end := window_start + interval '1 minute';
    user_in_flight := 0;
    user_calls := 0;
    user_granted := 0;
    IF cardinality(p_ended) > 0 THEN
        UPDATE call_limits SET leases = ARRAY(SELECT l FROM unnest(leases) l WHERE l <> ALL (p_ended))
         WHERE site_id = p_site AND caller_key = '';
        UPDATE call_limits SET leases = ARRAY(SELECT l FROM unnest(leases) l WHERE l <> ALL (p_ended))
         WHERE site_id = p_site AND caller_key = p_caller;
    END IF;
    SELECT t.taken, t.in_flight, t.calls, t.granted INTO admitted, site_in_flight, site_calls, site_granted
      FROM erpgate_call_take(p_site, '', p_lease, window_start, p_site_concurrency, p_site_per_minute, p_site_extra) t;
    IF NOT admitted THEN
        PERFORM pg_notify('erpgate_invalidate', 'limits:' || p_site || ':');
        RETURN;
    END IF;
    SELECT t.taken, t.in_flight, t.calls, t.granted INTO admitted, user_in_flight, user_calls, user_granted
      FROM erpgate_call_take(p_site, p_caller, p_lease, window_start, p_user_concurrency, p_user_per_minute, p_user_extra) t;
    IF NOT admitted THEN
        UPDATE call_limits
           SET leases = array_remove(leases, p_lease),
               window_calls = window_calls - 1 - site_granted
         WHERE site_id = p_site AND caller_key = '';
        site_granted := 0;
        PERFORM pg_notify('erpgate_invalidate', 'limits:' || p_site || ':' || p_caller);
    END IF;
END
$$;
-- +goose StatementEnd

-- erpgate_call_release gives back what a replica holds, one entry i per
-- (p_sites[i], p_callers[i]): the lease p_leases[i] if not null (on the
-- caller's row and the site's), and p_unused[i] calls reserved in the
-- minute starting p_windows[i] (on the caller's row, or the site's when
-- the caller is ''), if that minute is still the row's. The replica sends
-- entries sorted by (site, caller), so rows are locked in key order.
-- +goose StatementBegin
CREATE FUNCTION erpgate_call_release(
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

DROP TABLE call_leases;
DROP TABLE call_windows;

-- +goose Down
DROP FUNCTION erpgate_call_release(uuid[], text[], uuid[], integer[], timestamptz[]);
DROP FUNCTION erpgate_call_acquire(uuid, text, uuid, uuid[], integer, integer, integer, integer, integer, integer);
DROP FUNCTION erpgate_call_take(uuid, text, uuid, timestamptz, integer, integer, integer);
DROP TABLE call_limits;
-- As migration 00006 left them: unlogged, without foreign keys.
CREATE UNLOGGED TABLE call_leases (
    id          uuid        PRIMARY KEY,
    site_id     uuid        NOT NULL,
    caller_key  text        NOT NULL,
    acquired_at timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);
CREATE INDEX call_leases_site_idx ON call_leases (site_id, caller_key);
CREATE UNLOGGED TABLE call_windows (
    site_id      uuid        NOT NULL,
    caller_key   text        NOT NULL,
    window_start timestamptz NOT NULL,
    calls        integer     NOT NULL,
    PRIMARY KEY (site_id, caller_key, window_start)
);
