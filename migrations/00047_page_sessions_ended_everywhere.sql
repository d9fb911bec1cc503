-- +goose Up

-- "Sign out everywhere" on the site owner's page and the approval page:
-- every session of one person (an ERP user, case aside) on one site (a
-- session scope) for one page (the purpose its cookie is signed for) that
-- began before it ends, on every replica at once.
--
-- A session takes a mark from page_session_marks when it begins, and its
-- signed cookie carries it. Signing out everywhere takes a mark too and
-- records it here, under the SHA-256 of the page, scope and person: a
-- session whose mark is below it began before, and is refused. Marks come
-- from one sequence, not from the replicas' clocks, so a session begun a
-- moment before on a replica whose clock runs ahead ends too, and one
-- begun after, in the same second, does not. The page's check of a
-- session is one statement with ended_page_sessions (both by primary key).
-- A row is kept until every session it ends has expired (expires_at, with
-- an hour's margin for clocks), then swept with ended_page_sessions.
-- CACHE 1 (the default, said here for a reason): with a cache, each
-- connection would hand out marks from a range of its own, not in the
-- order they were taken.
CREATE SEQUENCE page_session_marks CACHE 1;

CREATE TABLE page_sessions_ended_everywhere (
    person_hash bytea       PRIMARY KEY,
    below_mark  bigint      NOT NULL,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX page_sessions_ended_everywhere_expires_idx ON page_sessions_ended_everywhere (expires_at);

-- +goose Down
DROP TABLE page_sessions_ended_everywhere;
DROP SEQUENCE page_session_marks;
