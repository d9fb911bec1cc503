// Package secrets owns erpgate's handling of secret material: the AES-256-GCM
// keyring that encrypts credentials at rest (ERPGATE_ENCRYPTION_KEYS), the
// self-redacting Secret string type, opaque bearer tokens stored only by
// their SHA-256 hash, constant-time comparison, and the additional-data
// encoding that binds a ciphertext to the row and field it belongs to.
//
// Nothing in this package ever puts key material, plaintext or token text
// into an error message or a formatted value.
package secrets
