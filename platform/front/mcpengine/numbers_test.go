package mcpengine

import (
	"encoding/json"
	"testing"
)

func TestPlainNumbers(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"credit_limit":0.1e7}`, `{"credit_limit":1000000}`},
		{`{"items":[{"qty":1E3,"rate":1.5e-3}]}`, `{"items":[{"qty":1000,"rate":0.0015}]}`},
		{`{"qty":1.50e1}`, `{"qty":15.0}`},
		{`{"qty":-2.5e+2}`, `{"qty":-250}`},
		// No exponent: the arguments as they came, byte for byte.
		{`{"rate":10.00500000000000000001, "text":"1e3 <b>"}`, `{"rate":10.00500000000000000001, "text":"1e3 <b>"}`},
	}
	for _, c := range cases {
		got, err := plainNumbers(json.RawMessage(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("plainNumbers(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
}
