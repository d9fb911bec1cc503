package approval

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// maxDepth bounds the nesting Digest accepts; tool arguments are shallow.
const maxDepth = 64

// Digest is the sha256 of the arguments' canonical JSON: object keys
// sorted (by their UTF-8 bytes), numbers as written, strings re-escaped
// the one way encoding/json writes them, no insignificant whitespace.
// Empty arguments are the empty object. A duplicate key, trailing data or
// a nesting deeper than 64 is an error: arguments that could be read two
// ways have no digest.
func Digest(args json.RawMessage) ([32]byte, error) {
	c, err := canonical(args)
	if err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(c), nil
}

// canonical returns the canonical form of a JSON value (see Digest).
func canonical(raw []byte) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte("{}"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out bytes.Buffer
	if err := canonicalValue(dec, &out, 0); err != nil {
		return nil, fmt.Errorf("approval: arguments digest: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("approval: arguments digest: data after the arguments")
	}
	return out.Bytes(), nil
}

func canonicalValue(dec *json.Decoder, out *bytes.Buffer, depth int) error {
	if depth > maxDepth {
		return errors.New("arguments nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return canonicalObject(dec, out, depth)
		case '[':
			out.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					out.WriteByte(',')
				}
				if err := canonicalValue(dec, out, depth+1); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil { // ']'
				return err
			}
			out.WriteByte(']')
			return nil
		}
		return fmt.Errorf("unexpected %q", t)
	case json.Number:
		out.WriteString(string(t))
	case string:
		writeString(out, t)
	case bool:
		if t {
			out.WriteString("true")
		} else {
			out.WriteString("false")
		}
	case nil:
		out.WriteString("null")
	}
	return nil
}

type member struct {
	key   string
	value []byte
}

func canonicalObject(dec *json.Decoder, out *bytes.Buffer, depth int) error {
	var members []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return errors.New("object key is not a string")
		}
		var v bytes.Buffer
		if err := canonicalValue(dec, &v, depth+1); err != nil {
			return err
		}
		members = append(members, member{key, v.Bytes()})
	}
	if _, err := dec.Token(); err != nil { // '}'
		return err
	}
	slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
	out.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			if members[i-1].key == m.key {
				return fmt.Errorf("duplicate key %q", m.key)
			}
			out.WriteByte(',')
		}
		writeString(out, m.key)
		out.WriteByte(':')
		out.Write(m.value)
	}
	out.WriteByte('}')
	return nil
}

func writeString(out *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a string always marshals
	out.Write(b)
}
