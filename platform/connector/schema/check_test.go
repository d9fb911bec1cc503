package schema

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// everything uses every feature the Checker judges.
func everything() *Schema {
	return Object(
		Prop("name", String("").Len(1, 5)).Required(),
		Prop("limit", Integer("").Min(1).Max(100)),
		Prop("offset", Integer("").Min(0)),
		Prop("amount", Number("").Min(-2.5).Max(1000)),
		Prop("ratio", Number("")),
		Prop("count", Integer("")),
		Prop("kind", String("").OneOf("a", "bé")),
		Prop("from", Date("")),
		Prop("code", String("").Match(`^[A-Z]{2}\d*$`).Nullable()),
		Prop("flag", Boolean("")),
		Prop("tags", Array(String("").Len(0, 3), "").Count(1, 3)),
		Prop("filters", Array(Object(
			Prop("field", String("")).Required(),
			Prop("value", Any("")),
		), "")),
		Prop("extra", Map(Integer("").Max(9))),
		Prop("open", OpenObject(Prop("x", Boolean("")))),
		Prop("either", &Schema{AnyOf: []*Schema{Integer("").Max(5), String("").Len(2, 2)}}),
	)
}

func compileReference(t testing.TB, s *Schema) *jsonschema.Schema {
	t.Helper()
	sch, err := CompileValidator(s, "mem:///s.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// referenceValid is the full validator's verdict, as the engine reaches it.
func referenceValid(ref *jsonschema.Schema, doc []byte) bool {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	return err == nil && ref.Validate(v) == nil
}

func TestCheckerJudgesLikeTheFullValidator(t *testing.T) {
	ref := compileReference(t, everything())
	chk := CompileChecker(everything())
	if chk == nil {
		t.Fatal("the schema did not compile")
	}
	// sure: the Checker must decide these itself, and agree.
	cases := []struct {
		doc   string
		valid bool
	}{
		{`{"name":"x"}`, true},
		{` {"name" : "abcde" , "limit": 100} `, true},
		{`{"name":"ééééé"}`, true},
		{`{"name":"éééééé"}`, false},
		{`{"name":""}`, false},
		{`{}`, false},
		{`{"name":"x","unknown":1}`, false},
		{`{"name":"x","limit":0}`, false},
		{`{"name":"x","limit":101}`, false},
		{`{"name":"x","limit":"5"}`, false},
		{`{"name":"x","limit":null}`, false},
		{`{"name":"x","count":-123456789012345678901234567890}`, true},
		{`{"name":"x","count":1.5}`, false},
		{`{"name":"x","offset":-1}`, false},
		{`{"name":"x","amount":-2}`, true},
		{`{"name":"x","amount":-3}`, false},
		{`{"name":"x","ratio":1.5e300}`, true},
		{`{"name":"x","ratio":true}`, false},
		{`{"name":"x","kind":"bé"}`, true},
		{`{"name":"x","kind":"b"}`, false},
		{`{"name":"x","kind":1}`, false},
		{`{"name":"x","from":"2024-02-29"}`, true},
		{`{"name":"x","from":"2023-02-29"}`, false},
		{`{"name":"x","from":"2023-13-01"}`, false},
		{`{"name":"x","from":"2023-1-01"}`, false},
		{`{"name":"x","code":null}`, true},
		{`{"name":"x","code":"AB12"}`, true},
		{`{"name":"x","code":"ab"}`, false},
		{`{"name":"x","flag":false}`, true},
		{`{"name":"x","flag":"false"}`, false},
		{`{"name":"x","tags":["a","bcd"]}`, true},
		{`{"name":"x","tags":[]}`, false},
		{`{"name":"x","tags":["a","b","c","d"]}`, false},
		{`{"name":"x","tags":["abcd"]}`, false},
		{`{"name":"x","filters":[{"field":"f","value":{"deep":[1,2.5,null]}}]}`, true},
		{`{"name":"x","filters":[{"value":1}]}`, false},
		{`{"name":"x","filters":[{"field":"f","other":1}]}`, false},
		{`{"name":"x","extra":{"a":1,"b":9}}`, true},
		{`{"name":"x","extra":{` + manyMembers(maxCheckedMembers) + `}}`, true},
		{`{"name":"x","extra":{"a":10}}`, false},
		{`{"name":"x","open":{"x":true,"y":[]}}`, true},
		{`{"name":"x","open":{"x":1}}`, false},
		{`{"name":"x","either":5}`, true},
		{`{"name":"x","either":"ab"}`, true},
		{`{"name":"x","either":6}`, false},
		{`{"name":"x","either":"abc"}`, false},
		{`[]`, false},
		{`"x"`, false},
		{`{"name":"x"`, false},
		{`{"name":"x"} {}`, false},
	}
	for _, c := range cases {
		if got := referenceValid(ref, []byte(c.doc)); got != c.valid {
			t.Fatalf("the full validator says %v for %s; the case is wrong", got, c.doc)
		}
		if got := chk.Valid([]byte(c.doc)); got != c.valid {
			t.Errorf("Checker.Valid(%s) = %v, want %v", c.doc, got, c.valid)
		}
	}
	// unsure: valid, but left to the full validator.
	for _, doc := range []string{
		`{"name":"\u0078"}`,                      // escaped string
		`{"na\u006de":"x"}`,                      // escaped name
		`{"name":"y","name":"x"}`,                // repeated name
		`{"name":"x","limit":2.0}`,               // an integer written with a fraction
		`{"name":"x","limit":1e1}`,               // or an exponent
		`{"name":"x","amount":1.5}`,              // a bounded number with a fraction
		`{"name":"x","offset":9007199254740993}`, // compared with a bound, not exact as a float64
		`{"name":"x","offset":123456789012345678901234567890}`,
		`{"name":"x","extra":{` + manyMembers(maxCheckedMembers+1) + `}}`, // too many members to compare
	} {
		if !referenceValid(ref, []byte(doc)) {
			t.Fatalf("the full validator rejects %s; the case is wrong", doc)
		}
		if chk.Valid([]byte(doc)) {
			t.Errorf("Checker.Valid(%s) = true; it should leave this to the full validator", doc)
		}
	}
}

func manyMembers(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":1`, i)
	}
	return b.String()
}

func TestCheckerRefusesWhatItDoesNotJudge(t *testing.T) {
	for name, s := range map[string]*Schema{
		"const":        {Const: "x"},
		"format":       {Type: "string", Format: "email"},
		"numeric enum": {Type: "integer", Enum: []any{1, 2}},
		"unknown type": {Type: "decimal"},
		"bad pattern":  String("").Match(`(`),
		"nested":       Object(Prop("a", &Schema{Const: 1})),
	} {
		if c := CompileChecker(s); c != nil {
			t.Errorf("%s: compiled; want nil", name)
		}
		if CompileChecker(s).Valid([]byte(`"x"`)) {
			t.Errorf("%s: a nil Checker said valid", name)
		}
	}
	if CompileChecker(nil) == nil || !CompileChecker(nil).Valid([]byte(`{"any":[1]}`)) {
		t.Error("a nil schema accepts anything")
	}
}

// FuzzChecker holds the Checker to the full validator: whatever it calls
// valid, the full validator must accept.
func FuzzChecker(f *testing.F) {
	for _, seed := range []string{
		`{"name":"x"}`, `{"name":"abc","limit":20,"from":"2024-01-31","kind":"a"}`,
		`{"name":"x","tags":["a"],"filters":[{"field":"f","value":null}],"extra":{"k":1}}`,
		`{"name":"x","either":"ab","code":"AB1","amount":-2,"ratio":1e5,"open":{"x":true}}`,
		`{"name":"\u00e9"}`, `{"name":"x","limit":1.0}`,
	} {
		f.Add([]byte(seed))
	}
	ref := compileReference(f, everything())
	chk := CompileChecker(everything())
	f.Fuzz(func(t *testing.T, doc []byte) {
		if chk.Valid(doc) && !referenceValid(ref, doc) {
			t.Fatalf("Checker.Valid(%q) = true, but the full validator rejects it", doc)
		}
	})
}

// FuzzIsDate holds isDate to time.Parse, which the full validator's date
// format uses.
func FuzzIsDate(f *testing.F) {
	for _, seed := range []string{"2024-02-29", "2023-02-29", "0000-01-01", "2024-12-31", "2024-00-10", "2024-1-1x", "+024-01-01"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, err := time.Parse("2006-01-02", s)
		if got := isDate([]byte(s)); got != (err == nil) {
			t.Fatalf("isDate(%q) = %v, time.Parse error %v", s, got, err)
		}
	})
}

func BenchmarkChecker(b *testing.B) {
	chk := CompileChecker(everything())
	ref := compileReference(b, everything())
	doc := []byte(`{"name":"abc","limit":20,"from":"2024-01-31","kind":"a"}`)
	b.Run("checker", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !chk.Valid(doc) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("full", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !referenceValid(ref, doc) {
				b.Fatal("invalid")
			}
		}
	})
}
