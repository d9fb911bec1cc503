// Package config owns erpgate's start-up configuration: reading it from
// environment variables and an optional YAML file, applying defaults,
// validating every value, and reporting every problem in one error.
//
// Environment variables override the file. Each setting has one YAML key and
// one environment variable, listed once in the settings table (settings.go);
// configs/erpgate.example.yaml documents every key, and tests keep the table,
// the Config struct and the example file in step.
//
// Secret values (the admin token, the database URL, the encryption keys) are
// held as secrets.Secret or *secrets.Keyring and never appear in error text
// or in LogFields.
//
// Runtime settings that operators change without a restart (per-site
// redaction, limits) live in Postgres; the values here are the
// deployment-wide defaults and ceilings.
package config
