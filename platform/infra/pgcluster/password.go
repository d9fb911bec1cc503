package pgcluster

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// loadOrCreatePassword returns the superuser password stored at path,
// generating and storing a new one (mode 0600) when the file does not exist.
// The password is hex so that it needs no escaping in a URL.
func loadOrCreatePassword(path string) (password string, created bool, err error) {
	raw, err := os.ReadFile(path)
	if err == nil {
		password = strings.TrimSpace(string(raw))
		if password == "" {
			return "", false, fmt.Errorf("pgcluster: password file %s is empty", path)
		}
		return password, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", false, fmt.Errorf("pgcluster: read password file: %w", err)
	}
	secret := make([]byte, 24)
	if _, err := rand.Read(secret); err != nil {
		return "", false, fmt.Errorf("pgcluster: generate password: %w", err)
	}
	password = hex.EncodeToString(secret)
	if err := writePrivateFile(path, password+"\n"); err != nil {
		return "", false, fmt.Errorf("pgcluster: store password: %w", err)
	}
	return password, true, nil
}

// writePrivateFile writes content to path with mode 0600, replacing any
// existing file.
func writePrivateFile(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
