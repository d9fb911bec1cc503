package config

import (
	"errors"
	"net/url"
	"unicode/utf8"

	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// The functions in this file handle secret settings. Their problems describe
// what is wrong and never quote the value; the loader also scrubs the raw
// value from every problem as a second line of defence.

// minAdminTokenLength keeps the admin token out of reach of guessing.
const minAdminTokenLength = 32

func applyDatabaseURL(c *Config, v value) error {
	// url.Parse errors quote the input, which holds the password, so they
	// are dropped.
	u, err := url.Parse(v.text)
	if err != nil {
		return errors.New("must be a valid postgres:// URL")
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return errors.New("must start with postgres:// or postgresql://")
	}
	c.DatabaseURL = secrets.Secret(v.text)
	return nil
}

func applyAdminToken(c *Config, v value) error {
	if utf8.RuneCountInString(v.text) < minAdminTokenLength {
		return errors.New("must be at least 32 characters; generate one with `openssl rand -base64 32`")
	}
	c.AdminToken = secrets.Secret(v.text)
	return nil
}

func applyEncryptionKeys(c *Config, v value) error {
	k, err := secrets.ParseKeyring(v.text)
	var kerr *secrets.KeyringError
	if errors.As(err, &kerr) {
		problems := make([]error, len(kerr.Problems))
		for i, p := range kerr.Problems {
			problems[i] = errors.New(p)
		}
		return errors.Join(problems...)
	}
	if err != nil {
		return errors.New("cannot be parsed as id:base64key pairs")
	}
	c.Keyring = k
	return nil
}
