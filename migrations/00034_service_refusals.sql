-- +goose Up

-- A service connection's credential the ERP refused (a changed password,
-- a disabled API user), kept until it runs out so that no replica signs it
-- in again meanwhile (platform/store/erptokens, connector.ServiceRefusals):
-- held by each replica alone, a bot calling in a loop through N replicas
-- cost the ERP N failed sign-ins per hold, enough to lock the API user
-- out. erp_user is the connector's store key (the user and a fingerprint
-- of the credential), so a corrected credential is not held. code and
-- message are the tool error the calls meanwhile are told. UNLOGGED: a
-- crash forgets the holds, which costs one more sign-in each.
CREATE UNLOGGED TABLE service_connection_refusals (
    site_id  uuid        NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    erp_user text        NOT NULL,
    code     text        NOT NULL,
    message  text        NOT NULL,
    until    timestamptz NOT NULL,
    PRIMARY KEY (site_id, erp_user)
);

-- +goose Down
DROP TABLE service_connection_refusals;
