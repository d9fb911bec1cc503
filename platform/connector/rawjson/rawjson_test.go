package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

var validTexts = []string{
	`0`, `-0`, `1.5e+10`, `-12.34E-5`, `true`, `false`, `null`, `""`,
	`"a\"b\\c\/d\b\f\n\r\t\u00e9\uD83D\uDE00"`, `"é ∑ 😀"`,
	` {"a" : [1, {"b": null}, "x"] , "c":{}} `, `[]`, `[ ]`, `{}`, "\t\r\n[1]\n",
}

var invalidTexts = []string{
	``, ` `, `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `0x10`, `tru`, `nul`, `True`,
	`"abc`, `"a\x"`, `"\u12"`, "\"a\x01b\"", "\"\xff\"", `[1,]`, `[,1]`, `{"a":1,}`,
	`{"a" 1}`, `{a:1}`, `{"a":1 "b":2}`, `[1 2]`, `[1] [2]`, `{"a":1}x`, `[`, `{`, `{"a":`,
	`'a'`, `[1,2`, `}`,
}

func TestValid(t *testing.T) {
	for _, s := range validTexts {
		if !Valid([]byte(s)) || Check([]byte(s)) != nil {
			t.Errorf("Valid(%q) = false: %v", s, Check([]byte(s)))
		}
	}
	for _, s := range invalidTexts {
		err := Check([]byte(s))
		var se *SyntaxError
		if Valid([]byte(s)) || !errors.As(err, &se) {
			t.Errorf("Valid(%q) = true or error %v is not a *SyntaxError", s, err)
		}
	}
}

func TestNestingLimitIsEncodingJSONs(t *testing.T) {
	for _, depth := range []int{maxDepth, maxDepth + 1} {
		doc := []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
		if got, want := Valid(doc), json.Valid(doc); got != want || got != (depth <= maxDepth) {
			t.Errorf("depth %d: Valid = %v, json.Valid = %v", depth, got, want)
		}
	}
}

func TestElements(t *testing.T) {
	els, err := Elements([]byte(" [ {\"a\": [1,2]} ,\n\"x\", 3 ,null,[] ] "))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`{"a": [1,2]}`, `"x"`, `3`, `null`, `[]`}
	if len(els) != len(want) {
		t.Fatalf("got %d elements, want %d", len(els), len(want))
	}
	for i := range want {
		if string(els[i]) != want[i] {
			t.Errorf("element %d = %s, want %s", i, els[i], want[i])
		}
	}
	// An element is its own slice: appending to it never overwrites the
	// text that follows it.
	_ = append(els[0], '!')
	if string(els[1]) != `"x"` {
		t.Error("appending to an element changed the next one")
	}
	if els, err := Elements([]byte(`[]`)); err != nil || els == nil || len(els) != 0 {
		t.Errorf("Elements([]) = %v, %v; want an empty, non-nil slice", els, err)
	}
	for _, bad := range []string{`{"a":1}`, `[1,]`, `[1] x`, `"[]"`} {
		if _, err := Elements([]byte(bad)); err == nil {
			t.Errorf("Elements(%s) gave no error", bad)
		}
	}
}

func TestFields(t *testing.T) {
	fields, err := Fields([]byte(` {"a": 1, "b\u0061" :{"x":[1]}, "a":"two"} `))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ name, written, value string }{{"a", `"a"`, `1`}, {"ba", `"b\u0061"`, `{"x":[1]}`}, {"a", `"a"`, `"two"`}}
	if len(fields) != len(want) {
		t.Fatalf("got %d fields, want %d", len(fields), len(want))
	}
	for i, w := range want {
		f := fields[i]
		if !f.Is(w.name) || string(f.Name) != w.written || string(f.Value) != w.value {
			t.Errorf("field %d = %s: %s, want %s: %s", i, f.Name, f.Value, w.written, w.value)
		}
	}
	if fields[1].Is("b\\u0061") || fields[0].Is("A") {
		t.Error("Is compares the unescaped name, exactly")
	}
	if fields, err := Fields([]byte(`{}`)); err != nil || fields == nil || len(fields) != 0 {
		t.Errorf("Fields({}) = %v, %v", fields, err)
	}
	for _, bad := range []string{`[1]`, `{"a":1,}`, `{"a":1}}`, `{"a"}`} {
		if _, err := Fields([]byte(bad)); err == nil {
			t.Errorf("Fields(%s) gave no error", bad)
		}
	}
}

func TestAppendMembers(t *testing.T) {
	rows := []json.RawMessage{json.RawMessage(`{"a":1}`), json.RawMessage(`"x"`)}
	for obj, want := range map[string]string{
		`{"meta":{"n":2}}`: `{"data":[{"a":1},"x"],"meta":{"n":2}}`,
		`{}`:               `{"data":[{"a":1},"x"]}`,
		`{ }`:              `{"data":[{"a":1},"x"] }`,
	} {
		got, err := AppendMembers(AppendArray([]byte(`{"data":`), rows), []byte(obj))
		if err != nil || string(got) != want || !Valid(got) {
			t.Errorf("AppendMembers(%s) = %s, %v; want %s", obj, got, err, want)
		}
	}
	if n := ArrayLen(rows); n != len(AppendArray(nil, rows)) || ArrayLen(nil) != 2 {
		t.Errorf("ArrayLen = %d, %d", n, ArrayLen(nil))
	}
	if got := AppendArray([]byte("x"), nil); string(got) != "x[]" {
		t.Errorf("AppendArray of nothing = %s", got)
	}
	if _, err := AppendMembers([]byte(`{"a":1`), []byte(`[1]`)); err == nil {
		t.Error("AppendMembers accepted an array")
	}
	allocs := testing.AllocsPerRun(10, func() { _ = AppendArray(nil, rows) })
	if allocs != 1 {
		t.Errorf("AppendArray allocated %v times, want once", allocs)
	}
}

func TestMember(t *testing.T) {
	doc := []byte(`{"meta": {"data": 1}, "data" : [{"n":1}], "d\u0061ta2": true, "da\u0074a": "last"}`)
	v, ok, err := Member(doc, "data")
	if err != nil || !ok || string(v) != `"last"` {
		t.Errorf(`Member(data) = %s, %v, %v; want the last "data", written with an escape`, v, ok, err)
	}
	if v, ok, err := Member(doc, "meta"); err != nil || !ok || string(v) != `{"data": 1}` {
		t.Errorf("Member(meta) = %s, %v, %v", v, ok, err)
	}
	if _, ok, err := Member(doc, "Data"); err != nil || ok {
		t.Errorf("Member(Data) = %v, %v; names are compared exactly", ok, err)
	}
	if _, ok, err := Member([]byte(`{}`), "data"); err != nil || ok {
		t.Errorf("Member of {} = %v, %v", ok, err)
	}
	for _, bad := range []string{`[{"data":1}]`, `{"data":1`, `{"data":1} {}`, `{"data":01}`} {
		if _, _, err := Member([]byte(bad), "data"); err == nil {
			t.Errorf("Member(%s) gave no error", bad)
		}
	}
}

// FuzzValid holds Valid to encoding/json, which accepts invalid UTF-8 in
// strings (and replaces it when decoding); Valid refuses it. When the text
// is valid, Elements and Member must agree with json.Unmarshal.
func FuzzValid(f *testing.F) {
	for _, s := range append(append([]string{}, validTexts...), invalidTexts...) {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"data":[{"a":1},{"b":"\u00e9"}],"x":2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		want := json.Valid(b) && utf8.Valid(b)
		if got := Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, want %v", b, got, want)
		}
		if !want {
			if _, err := Elements(b); err == nil {
				t.Fatalf("Elements(%q) accepted invalid text", b)
			}
			if _, _, err := Member(b, "data"); err == nil {
				t.Fatalf("Member(%q) accepted invalid text", b)
			}
			if err := EachMember(b, func(Field) {}); err == nil {
				t.Fatalf("EachMember(%q) accepted invalid text", b)
			}
			if complete, err := Strings(b, func([]byte, bool, bool) bool { return true }); complete || err == nil {
				t.Fatalf("Strings(%q) accepted invalid text", b)
			}
			return
		}
		checkStrings(t, b)
		var arr []json.RawMessage
		if json.Unmarshal(b, &arr) == nil && arr != nil {
			els, err := Elements(b)
			if err != nil || len(els) != len(arr) {
				t.Fatalf("Elements(%q) = %d elements, %v; want %d", b, len(els), err, len(arr))
			}
			for i := range arr {
				if !equalJSON(els[i], arr[i]) {
					t.Fatalf("Elements(%q)[%d] = %s, want %s", b, i, els[i], arr[i])
				}
			}
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(b, &obj) == nil && obj != nil {
			for name, wantV := range obj {
				v, ok, err := Member(b, name)
				if err != nil || !ok || !equalJSON(v, wantV) {
					t.Fatalf("Member(%q, %q) = %s, %v, %v; want %s", b, name, v, ok, err, wantV)
				}
			}
			fields, err := Fields(b)
			if err != nil {
				t.Fatalf("Fields(%q): %v", b, err)
			}
			for _, f := range fields {
				var name string
				if json.Unmarshal(f.Name, &name) != nil || !f.Is(name) {
					t.Fatalf("Fields(%q): name %s is not itself", b, f.Name)
				}
				if _, in := obj[name]; !in {
					t.Fatalf("Fields(%q): %q is not a member", b, name)
				}
			}
			var each []Field
			if err := EachMember(b, func(f Field) { each = append(each, f) }); err != nil || len(each) != len(fields) {
				t.Fatalf("EachMember(%q) = %d members, %v; Fields gives %d", b, len(each), err, len(fields))
			}
			for i := range each {
				if !bytes.Equal(each[i].Name, fields[i].Name) || !bytes.Equal(each[i].Value, fields[i].Value) {
					t.Fatalf("EachMember(%q)[%d] = %s:%s, Fields gives %s:%s", b, i, each[i].Name, each[i].Value, fields[i].Name, fields[i].Value)
				}
			}
			if len(fields) < len(obj) {
				t.Fatalf("Fields(%q) = %d fields, want at least %d", b, len(fields), len(obj))
			}
			if _, in := obj["\x00absent"]; !in {
				if _, ok, _ := Member(b, "\x00absent"); ok {
					t.Fatalf("Member(%q) found an absent name", b)
				}
			}
		}
	})
}

// checkStrings holds Strings to encoding/json's tokens: the same strings,
// in the same order, names told from values.
func checkStrings(t *testing.T, b []byte) {
	t.Helper()
	type str struct {
		s    string
		name bool
	}
	var want []str
	dec := json.NewDecoder(bytes.NewReader(b))
	var inObject []bool // per open container: an object?
	expectName := false
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				inObject = append(inObject, true)
				expectName = true
				continue
			case '[':
				inObject = append(inObject, false)
			default:
				inObject = inObject[:len(inObject)-1]
			}
		case string:
			want = append(want, str{v, expectName})
			if expectName {
				expectName = false
				continue
			}
		}
		expectName = len(inObject) > 0 && inObject[len(inObject)-1]
	}
	var got []str
	complete, err := Strings(b, func(s []byte, name, escaped bool) bool {
		q := append(append([]byte{'"'}, s...), '"')
		var text string
		if err := json.Unmarshal(q, &text); err != nil {
			t.Fatalf("Strings(%q) gave %q, not a string's content", b, s)
		}
		if escaped != bytes.ContainsRune(s, '\\') {
			t.Fatalf("Strings(%q): %q escaped = %v", b, s, escaped)
		}
		got = append(got, str{text, name})
		return true
	})
	if !complete || err != nil {
		t.Fatalf("Strings(%q) = %v, %v", b, complete, err)
	}
	if len(got) != len(want) {
		t.Fatalf("Strings(%q) gave %v, want %v", b, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("Strings(%q) gave %v, want %v", b, got, want)
		}
	}
	// Stopping at the first string stops the walk.
	if len(want) > 0 {
		calls := 0
		complete, err := Strings(b, func([]byte, bool, bool) bool { calls++; return false })
		if complete || err != nil || calls != 1 {
			t.Fatalf("Strings(%q) stopped: %v, %v after %d calls", b, complete, err, calls)
		}
	}
}

func TestStrings(t *testing.T) {
	for _, s := range validTexts {
		checkStrings(t, []byte(s))
	}
	checkStrings(t, []byte(`{"a":{"b\u0041":["x",{"c":"d"},"\n"]},"e":[],"f":{}}`))
}

// equalJSON compares two valid texts as encoding/json compacts them.
func equalJSON(a, b []byte) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

func BenchmarkValid(b *testing.B) {
	row := `{"name":"CUST-00017","customer_name":"Müller & Söhne GmbH","customer_type":"Company","customer_group":"Commercial","territory":"Germany","default_currency":"EUR","disabled":0,"credit_limit":12500.50}`
	doc := []byte(`{"data":[` + strings.TrimSuffix(strings.Repeat(row+",", 20), ",") + `]}`)
	b.Run("rawjson", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if !Valid(doc) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if !json.Valid(doc) {
				b.Fatal("invalid")
			}
		}
	})
}

func TestAppendUnquoted(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`plain`, "plain"},
		{`M\u00fcller \u0026 S\u00f6hne`, "Müller & Söhne"},
		{`\"\\\/\b\f\n\r\t`, "\"\\/\b\f\n\r\t"},
		{`\ud83d\ude00`, "😀"},
		{`\ud83d`, "\uFFFD"},
		{`\ud83dx`, "\uFFFDx"},
		{`\ude00\ud83d`, "\uFFFD\uFFFD"},
		{"caf\xe9", "caf\uFFFD"},
	} {
		got, ok := AppendUnquoted([]byte("<"), []byte(c.in))
		if !ok || string(got) != "<"+c.want {
			t.Errorf("AppendUnquoted(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
	for _, bad := range []string{`\`, `\x`, `\u12`, `\u12G4`, `a"b`, "a\nb", `\ud83d\u12`} {
		if got, ok := AppendUnquoted([]byte("<"), []byte(bad)); ok || string(got) != "<" {
			t.Errorf("AppendUnquoted(%q) = %q, %v; want refused, dst unchanged", bad, got, ok)
		}
	}
	buf := make([]byte, 0, 64)
	in := []byte(`M\u00fcller \u0026 S\u00f6hne`)
	if n := testing.AllocsPerRun(100, func() { _, _ = AppendUnquoted(buf[:0], in) }); n != 0 {
		t.Errorf("AppendUnquoted allocates %v times with room in dst", n)
	}
}

// FuzzAppendUnquoted holds AppendUnquoted to encoding/json's decoding of
// the same string.
func FuzzAppendUnquoted(f *testing.F) {
	for _, s := range []string{`plain`, `\u00e9\ud83d\ude00`, `\ud800\udbff`, `\ud800\u`, "\xff", `\/`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		q := append(append([]byte{'"'}, s...), '"')
		var want string
		werr := json.Unmarshal(q, &want)
		got, ok := AppendUnquoted(nil, s)
		if ok != (werr == nil) || (ok && string(got) != want) {
			t.Fatalf("AppendUnquoted(%q) = %q, %v; encoding/json: %q, %v", s, got, ok, want, werr)
		}
	})
}
