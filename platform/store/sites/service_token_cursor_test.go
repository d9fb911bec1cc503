package sites_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// A page's cursor is made under the keyring's primary key and read under
// every key listed: a client paging across a key rotation (the new key
// added first, the old one kept) gets its next page, and once the old key
// is removed, the cursor made under it is refused as not made here. A
// bare token id, the cursor of the pages made before cursors held a
// place, is still read while the token exists.
func TestServiceTokenPageCursorAcrossAKeyRotation(t *testing.T) {
	pool := pgtest.NewPool(t)
	k1, k2 := keySpec(t, "k1"), keySpec(t, "k2")
	old := sites.NewStore(pool, keyring(t, k1))
	acme := mustCreate(t, old, "acme")
	mustPutAPI(t, old, acme, "key", "secret")
	var ids []string
	for i := range 4 {
		st, _, err := old.IssueServiceToken(t.Context(), acme.ID, fmt.Sprintf("bot %d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, st.ID.String())
	}
	idsOf := func(list []sites.ServiceToken) string {
		var out []string
		for _, st := range list {
			out = append(out, st.ID.String())
		}
		return fmt.Sprint(out)
	}
	first, next, err := old.ListServiceTokensPage(t.Context(), acme.ID, "", 2)
	if err != nil || idsOf(first) != fmt.Sprint(ids[:2]) || next == "" {
		t.Fatalf("the first page: %s, next %q, %v", idsOf(first), next, err)
	}

	rotated := sites.NewStore(pool, keyring(t, k2+","+k1))
	second, last, err := rotated.ListServiceTokensPage(t.Context(), acme.ID, next, 2)
	if err != nil || idsOf(second) != fmt.Sprint(ids[2:]) || last != "" {
		t.Fatalf("the next page after the rotation: %s, next %q, %v; want %v and none", idsOf(second), last, err, ids[2:])
	}
	onlyK2 := sites.NewStore(pool, keyring(t, k2))
	if _, _, err := onlyK2.ListServiceTokensPage(t.Context(), acme.ID, next, 2); !errors.Is(err, sites.ErrBadCursor) {
		t.Fatalf("a cursor made under a removed key: %v, want ErrBadCursor", err)
	}

	legacy, _, err := onlyK2.ListServiceTokensPage(t.Context(), acme.ID, ids[1], 2)
	if err != nil || idsOf(legacy) != fmt.Sprint(ids[2:]) {
		t.Fatalf("after a bare token id: %s, %v; want %v", idsOf(legacy), err, ids[2:])
	}
}
