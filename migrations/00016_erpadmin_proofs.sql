-- +goose Up

-- ERP-administrator proofs in progress (web/erpadmin): a sign-in at an ERP
-- that registration or a site owner's page started, waiting for the ERP to
-- send the browser back. Only hashes of the state and of the browser's
-- binding cookie are kept; the PKCE verifier is encrypted under key_id. A
-- row is deleted when its callback claims it (single use), and rows past
-- expires_at are swept when new ones are made.
CREATE TABLE erpadmin_proofs (
    state_hash          bytea       PRIMARY KEY,
    browser_hash        bytea       NOT NULL,
    purpose             text        NOT NULL,
    ref                 text        NOT NULL,
    key_id              text        NOT NULL,
    verifier_ciphertext bytea       NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    expires_at          timestamptz NOT NULL
);
CREATE INDEX erpadmin_proofs_expires_idx ON erpadmin_proofs (expires_at);

-- +goose Down
DROP TABLE erpadmin_proofs;
