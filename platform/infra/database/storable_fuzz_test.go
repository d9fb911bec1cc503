package database_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// FuzzStorable: whatever text a request carried (a refused action's
// input, kept in admin_events), StorableText is accepted by a Postgres
// text column and StorableJSON of encoding/json's output by a jsonb one,
// and both read back as the input with only the NULs (and, for text, the
// bytes that are not UTF-8) turned into U+FFFD.
func FuzzStorable(f *testing.F) {
	f.Add("erp_user", "a\x00b")
	f.Add("k\x00", `\u0000`)
	f.Add("name", "\\\x00\\u0000\"\xff")
	f.Add("", "plain é 日本")
	pool := pgtest.NewPool(f)
	f.Fuzz(func(t *testing.T, key, value string) {
		ctx := t.Context()
		var text string
		if err := pool.QueryRow(ctx, `SELECT $1::text`, database.StorableText(value)).Scan(&text); err != nil {
			t.Fatalf("StorableText(%q) refused: %v", value, err)
		}
		if want := strings.ReplaceAll(strings.ToValidUTF8(value, "\uFFFD"), "\x00", "\uFFFD"); text != want {
			t.Fatalf("StorableText(%q) read back as %q, want %q", value, text, want)
		}
		raw, err := json.Marshal(map[string]any{key: value, "list": []string{value, key}})
		if err != nil {
			t.Fatal(err)
		}
		var back []byte
		if err := pool.QueryRow(ctx, `SELECT $1::jsonb::text`, string(database.StorableJSON(raw))).Scan(&back); err != nil {
			t.Fatalf("StorableJSON(%s) refused: %v", raw, err)
		}
		var got, want any
		if err := json.Unmarshal(back, &got); err != nil {
			t.Fatal(err)
		}
		// encoding/json already wrote each byte that is not UTF-8 as
		// U+FFFD; only the NULs are left to replace.
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		want = withoutNUL(want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("StorableJSON(%s) read back as %s", raw, back)
		}
		if !utf8.Valid(back) {
			t.Fatalf("jsonb gave back %q", back)
		}
	})
}

// withoutNUL is v, decoded JSON, with every NUL in its texts and keys
// turned into U+FFFD.
func withoutNUL(v any) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, "\x00", "\uFFFD")
	case []any:
		for i := range x {
			x[i] = withoutNUL(x[i])
		}
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[withoutNUL(k).(string)] = withoutNUL(e)
		}
		return out
	}
	return v
}
