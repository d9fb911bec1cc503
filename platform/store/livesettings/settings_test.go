package livesettings

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func def(t *testing.T, name string) Def {
	t.Helper()
	d, ok := Lookup(name)
	if !ok {
		t.Fatalf("no setting %s", name)
	}
	return d
}

func TestParseTakesWhatAPersonTypes(t *testing.T) {
	cases := []struct {
		name, text string
		want       any
	}{
		{RedactionAdd, " salary\r\nbonus, salary \n\n", []string{"salary", "bonus"}},
		{RedactionAdd, "", []string{}},
		{MaxRecords, " 250 ", 250},
		{ReadOnly, "on", true},
		{ReadOnly, "", false},
		{CanaryInquiry, " AI Access ", "AI Access"},
	}
	for _, c := range cases {
		got, err := def(t, c.name).Parse(c.text)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %q = %#v, %v; want %#v", c.name, c.text, got, err, c.want)
		}
	}
	refusals := []struct{ name, text, says string }{
		{MaxRecords, "0", "whole number from 1 to 100000"},
		{MaxRecords, "100001", "whole number from 1 to 100000"},
		{MaxRecords, "ten", "whole number"},
		{UserPerMinute, "-3", "whole number from 1"},
		{ReadOnly, "maybe", "on or off"},
		{CanaryInquiry, "../etc", "generic inquiry"},
		{CanaryInquiry, "", "generic inquiry"},
		{RedactionAdd, strings.Repeat("x", 201), "at most 200 characters"},
		{Tools, strings.Repeat("t\n", 1) + strings.Repeat("a,", 300), ""},
	}
	for _, c := range refusals {
		_, err := def(t, c.name).Parse(c.text)
		if c.says == "" {
			continue // a list of one repeated entry is fine
		}
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s %q: %v; want it to say %q", c.name, c.text, err, c.says)
		}
	}
	many := make([]string, 201)
	for i := range many {
		many[i] = "p" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strings.Repeat("y", i/26)
	}
	if _, err := def(t, RedactionSkip).Parse(strings.Join(many, "\n")); err == nil || !strings.Contains(err.Error(), "at most 200 entries") {
		t.Errorf("201 entries: %v", err)
	}
}

func TestFromJSONWantsTheSettingsType(t *testing.T) {
	if v, err := def(t, Tools).FromJSON(json.RawMessage(`["list_customers"," read ","read"]`)); err != nil || !reflect.DeepEqual(v, []string{"list_customers", "read"}) {
		t.Errorf("tools = %#v, %v", v, err)
	}
	for name, raw := range map[string]string{MaxRecords: `"250"`, ReadOnly: `"on"`, Tools: `"read"`, CanaryInquiry: `7`, RedactionAdd: `null`} {
		if v, err := def(t, name).FromJSON(json.RawMessage(raw)); err == nil {
			t.Errorf("%s %s accepted as %#v", name, raw, v)
		}
	}
}

// FuzzParse: whatever a person types, Parse either refuses it in a
// sentence or returns a value that Format shows and Parse reads back the
// same, and that the stored form (JSON) decodes to the same value.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"salary\nbonus", "250", "on", "AI Access", ",,\r\n", "  ", "１２", "a\x00b"} {
		for i := range Defs {
			f.Add(i, s)
		}
	}
	f.Fuzz(func(t *testing.T, i int, text string) {
		if i < 0 {
			i = -i
		}
		d := Defs[i%len(Defs)]
		v, err := d.Parse(text)
		if err != nil {
			if !strings.HasPrefix(err.Error(), d.Label) {
				t.Fatalf("%s: the refusal does not name the setting: %v", d.Name, err)
			}
			return
		}
		again, err := d.Parse(Format(v))
		if err != nil || !reflect.DeepEqual(again, v) {
			t.Fatalf("%s %q → %#v → %q → %#v, %v", d.Name, text, v, Format(v), again, err)
		}
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		stored, err := d.decode(raw)
		if err != nil || !reflect.DeepEqual(stored, v) {
			t.Fatalf("%s: stored %s decodes to %#v, %v", d.Name, raw, stored, err)
		}
	})
}

// FuzzFromJSON: whatever the admin API is sent, FromJSON either refuses
// it in a sentence naming the setting or returns a value that is stored
// as it is (FromJSON of its JSON gives it back) and that the console
// shows (Format) and reads back (Parse) the same.
func FuzzFromJSON(f *testing.F) {
	for _, s := range []string{`["salary","bonus"]`, `250`, `true`, `"AI Access"`, `[" a ","a",""]`, `["a,b"]`, `2.5e2`, `null`, `{}`, `"x\u0000y"`} {
		for i := range Defs {
			f.Add(i, []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, i int, raw []byte) {
		if i < 0 {
			i = -i
		}
		d := Defs[i%len(Defs)]
		v, err := d.FromJSON(raw)
		if err != nil {
			if !strings.HasPrefix(err.Error(), d.Label) {
				t.Fatalf("%s: the refusal does not name the setting: %v", d.Name, err)
			}
			return
		}
		stored, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		again, err := d.FromJSON(stored)
		if err != nil || !reflect.DeepEqual(again, v) {
			t.Fatalf("%s %s → %#v → %s → %#v, %v", d.Name, raw, v, stored, again, err)
		}
		shown, err := d.Parse(Format(v))
		if err != nil || !reflect.DeepEqual(shown, v) {
			t.Fatalf("%s %s → %#v is shown as %q, which reads back as %#v, %v", d.Name, raw, v, Format(v), shown, err)
		}
	})
}
