package rawjson

import (
	"bytes"
	"testing"
)

// FuzzCheckedWalksAgree: on text the checking walks accept, the checked
// walks find the same members and elements; on any text they return
// without reading outside it.
func FuzzCheckedWalksAgree(f *testing.F) {
	for _, s := range append(append([]string{}, validTexts...), invalidTexts...) {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		`{"a":{"value":"x\"y\\"},"b":[1,{"c":"]}"}],"d":-1.5e3,"e\u0041":true}`,
		` [ {"a" : 1} , "x" , [ ] , { } , null ] `,
		`{"a":"\\\\","b":"\\\""}`,
		`{"a":"unterminated`, `[{"a":[}]`, `{"a" 1}`, `[1 2]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var checked []Field
		EachMemberChecked(b, func(fd Field) { checked = append(checked, fd) })
		gotElems := ElementsChecked(b)
		var want []Field
		if err := EachMember(b, func(fd Field) { want = append(want, fd) }); err == nil {
			if len(checked) != len(want) {
				t.Fatalf("%q: %d members, checked walk %d", b, len(want), len(checked))
			}
			for i := range want {
				w, g := want[i], checked[i]
				if !bytes.Equal(w.Name, g.Name) || !bytes.Equal(w.Value, g.Value) || w.escaped != g.escaped {
					t.Fatalf("%q member %d: %q:%q (escaped %v), checked walk %q:%q (%v)", b, i, w.Name, w.Value, w.escaped, g.Name, g.Value, g.escaped)
				}
			}
		}
		if elems, err := Elements(b); err == nil {
			if len(elems) != len(gotElems) {
				t.Fatalf("%q: %d elements, checked walk %d", b, len(elems), len(gotElems))
			}
			for i := range elems {
				if !bytes.Equal(elems[i], gotElems[i]) {
					t.Fatalf("%q element %d: %q, checked walk %q", b, i, elems[i], gotElems[i])
				}
			}
		}
	})
}
