package activity

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

// TestParseQueryReportsEveryProblemAtOnce: each bad parameter gives its
// own plain sentence, and nothing is half read.
func TestParseQueryReportsEveryProblemAtOnce(t *testing.T) {
	v := url.Values{
		ParamFrom: {"yesterday"}, ParamTo: {"3000-01-01T00:00"}, ParamOutcome: {"maybe"},
		ParamAfter: {"not-a-cursor"}, ParamTool: {strings.Repeat("x", 400)}, ParamRedacted: {"some"},
	}
	_, err := ParseQuery(v, t0, UsageOutcomes)
	var qe *QueryError
	ok := errors.As(err, &qe)
	if !ok {
		t.Fatalf("error %v, want a QueryError", err)
	}
	if len(qe.Problems) != 6 {
		t.Errorf("%d problems, want 6: %q", len(qe.Problems), qe.Problems)
	}
	for _, p := range qe.Problems {
		if !strings.HasSuffix(p, ".") || strings.Contains(p, "parsing time") {
			t.Errorf("problem %q is not a plain sentence", p)
		}
	}
	if _, err := ParseQuery(url.Values{ParamFrom: {"2026-11-30T12:00"}, ParamTo: {"2026-11-30T11:00"}}, t0, UsageOutcomes); err == nil {
		t.Error("a reversed range is accepted")
	}
}

// TestParseQueryDefaultsAndRoundTrip: no range is the last 24 hours; a
// filter written back as values reads as the same filter.
func TestParseQueryDefaultsAndRoundTrip(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 30, 20, 0, time.UTC)
	p, err := ParseQuery(url.Values{}, now, UsageOutcomes)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 12, 1, 9, 31, 0, 0, time.UTC); !p.Filter.To.Equal(want) || !p.Filter.From.Equal(want.Add(-24*time.Hour)) {
		t.Errorf("default range %v – %v", p.Filter.From, p.Filter.To)
	}
	in := url.Values{ParamFrom: {"2026-11-30T08:00"}, ParamTo: {"2026-12-01T08:00:00Z"}, ParamSite: {"acme"},
		ParamERPUser: {"jane@acme.example"}, ParamTool: {"list_customers"}, ParamOutcome: {"error"},
		ParamErrorCode: {"NOT_FOUND"}, ParamClient: {"claude"}, ParamRedacted: {"yes"}}
	p, err = ParseQuery(in, now, UsageOutcomes)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseQuery(Values(p.Filter, p.Site), now, UsageOutcomes)
	if err != nil {
		t.Fatal(err)
	}
	if again.Filter != p.Filter || again.Site != "acme" || !p.Filter.Redacted {
		t.Errorf("round trip %+v, want %+v", again.Filter, p.Filter)
	}
}

// FuzzParseQuery: any query either is refused with sentences or gives a
// valid filter that reads back the same from its own values.
func FuzzParseQuery(f *testing.F) {
	f.Add("from=2026-11-30T08:00&to=2026-12-01&tool=x&outcome=error")
	f.Add("from=%ff&after=1.0.1&erp_user=a%00b")
	f.Add("to=1999-12-31")
	now := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		p, err := ParseQuery(v, now, UsageOutcomes)
		if err != nil {
			if qe := (*QueryError)(nil); !errors.As(err, &qe) || len(qe.Problems) == 0 {
				t.Fatal("refused without a reason")
			}
			return
		}
		if p.Filter.Validate() != nil || !p.Filter.From.Before(p.Filter.To) {
			t.Fatalf("accepted an invalid range %v – %v", p.Filter.From, p.Filter.To)
		}
		again, err := ParseQuery(Values(p.Filter, p.Site), now, UsageOutcomes)
		if err != nil {
			t.Fatalf("its own values are refused: %v", err)
		}
		if !again.Filter.From.Equal(p.Filter.From.Truncate(time.Second)) || again.Filter.Tool != p.Filter.Tool || again.Filter.ERPUser != p.Filter.ERPUser {
			t.Fatalf("round trip %+v, want %+v", again.Filter, p.Filter)
		}
	})
}

// FuzzQueryReachesTheDatabase: a query ParseQuery accepts is answered by
// the store (possibly with nothing), never refused by PostgreSQL.
func FuzzQueryReachesTheDatabase(f *testing.F) {
	f.Add("from=2026-11-30T08:00&to=2026-12-01&tool=x&outcome=error")
	f.Add("erp_user=a%00b")
	f.Add("tool=%00&site=acme")
	f.Add("client=%C3%A9&erp_user=jane%40example.com")
	now := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	s := NewStore(pgtest.NewPool(f))
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		p, err := ParseQuery(v, now, UsageOutcomes)
		if err != nil {
			return
		}
		if _, err := s.Usage(context.Background(), p.Filter, nil, 10); err != nil {
			t.Fatalf("%q: usage: %v", raw, err)
		}
		if _, err := s.Audit(context.Background(), p.Filter, nil, 10); err != nil {
			t.Fatalf("%q: audit: %v", raw, err)
		}
	})
}
