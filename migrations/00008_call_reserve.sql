-- +goose Up

-- erpgate_call_reserve reserves more calls of the current minute for a
-- replica that is running short, without taking a lease: up to p_site_extra
-- on the site's row and up to p_user_extra on the caller's, each capped by
-- what the row's minute has left. The replica asks before its reservation
-- runs out, off any call's path, so that calls on warm slots keep needing
-- no round trip (see migration 00007). The site's row is updated first, as
-- everywhere. Rows that do not exist (yet, or any more) grant nothing.
-- +goose StatementBegin
CREATE FUNCTION erpgate_call_reserve(
    p_site uuid, p_caller text,
    p_user_per_minute integer, p_site_per_minute integer,
    p_user_extra integer, p_site_extra integer,
    OUT minute_start timestamptz, OUT minute_end timestamptz,
    OUT user_granted integer, OUT site_granted integer)
LANGUAGE plpgsql AS $$
BEGIN
    minute_start := date_trunc('minute', now());
    minute_end := minute_start + interval '1 minute';
    site_granted := 0;
    user_granted := 0;
    IF p_site_extra > 0 THEN
        UPDATE call_limits
           SET reserved = greatest(least(p_site_extra, p_site_per_minute - CASE WHEN window_start = minute_start THEN window_calls ELSE 0 END), 0),
               window_calls = CASE WHEN window_start = minute_start THEN window_calls ELSE 0 END
                   + greatest(least(p_site_extra, p_site_per_minute - CASE WHEN window_start = minute_start THEN window_calls ELSE 0 END), 0),
               window_start = minute_start
         WHERE site_id = p_site AND caller_key = ''
        RETURNING reserved INTO site_granted;
        site_granted := coalesce(site_granted, 0);
    END IF;
    IF p_user_extra > 0 THEN
        UPDATE call_limits
           SET reserved = greatest(least(p_user_extra, p_user_per_minute - CASE WHEN window_start = minute_start THEN window_calls ELSE 0 END), 0),
               window_calls = CASE WHEN window_start = minute_start THEN window_calls ELSE 0 END
                   + greatest(least(p_user_extra, p_user_per_minute - CASE WHEN window_start = minute_start THEN window_calls ELSE 0 END), 0),
               window_start = minute_start
         WHERE site_id = p_site AND caller_key = p_caller
        RETURNING reserved INTO user_granted;
        user_granted := coalesce(user_granted, 0);
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION erpgate_call_reserve(uuid, text, integer, integer, integer, integer);
