package secrets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"gopkg.in/yaml.v3"
)

const secretValue = "s3cr3t-VALUE-do-not-print"

func assertRedacted(t *testing.T, what, out string) {
	t.Helper()
	if strings.Contains(out, secretValue) || strings.Contains(out, fmt.Sprintf("%x", secretValue)) {
		t.Errorf("%s leaked the secret: %s", what, out)
	}
	if !strings.Contains(out, Redacted) {
		t.Errorf("%s = %q, want it to contain %q", what, out, Redacted)
	}
}

func TestSecretFormatting(t *testing.T) {
	s := Secret(secretValue)
	got := fmt.Sprintf("%v %+v %#v %s %q", s, s, s, s, s)
	if want := `[redacted] [redacted] [redacted] [redacted] "[redacted]"`; got != want {
		t.Errorf("Sprintf = %q, want %q", got, want)
	}
	for _, verb := range []string{"%x", "%X", "%d", "%10s", "%-5v", "%T-%v"} {
		assertRedacted(t, "Sprintf("+verb+")", fmt.Sprintf(verb, s, s))
	}
	p := &s
	assertRedacted(t, "pointer", fmt.Sprintf("%v %s", p, p))

	type holder struct {
		Name  string
		Token Secret
		Ptr   *Secret
	}
	h := holder{Name: "x", Token: s, Ptr: p}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x"} {
		assertRedacted(t, "struct "+verb, fmt.Sprintf(verb, h))
	}
	assertRedacted(t, "String", s.String())
	assertRedacted(t, "GoString", s.GoString())
	assertRedacted(t, "Sprint", fmt.Sprint(s, []Secret{s}, map[string]Secret{"k": s}))
}

func TestSecretMarshalling(t *testing.T) {
	s := Secret(secretValue)
	out, err := json.Marshal(map[string]any{"value": s, "list": []Secret{s}, "nested": struct{ S Secret }{s}})
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	assertRedacted(t, "json", string(out))

	text, err := s.MarshalText()
	if err != nil {
		t.Fatalf("MarshalText: %v", err)
	}
	assertRedacted(t, "MarshalText", string(text))

	y, err := yaml.Marshal(struct{ S Secret }{s})
	if err != nil {
		t.Fatalf("yaml.Marshal: %v", err)
	}
	assertRedacted(t, "yaml", string(y))
}

func TestSecretDecodesLikeAString(t *testing.T) {
	var v struct{ S Secret }
	if err := json.Unmarshal([]byte(`{"S":"abc"}`), &v); err != nil || v.S.Reveal() != "abc" {
		t.Fatalf("json.Unmarshal = %q, %v", v.S.Reveal(), err)
	}
	if err := yaml.Unmarshal([]byte("s: def\n"), &v); err != nil || v.S.Reveal() != "def" {
		t.Fatalf("yaml.Unmarshal = %q, %v", v.S.Reveal(), err)
	}
}

func TestSecretRevealAndIsSet(t *testing.T) {
	if got := Secret(secretValue).Reveal(); got != secretValue {
		t.Errorf("Reveal() = %q", got)
	}
	if Secret("").IsSet() || !Secret("x").IsSet() {
		t.Error("IsSet is wrong")
	}
}

func TestSecretInZapJSONLogs(t *testing.T) {
	var buf bytes.Buffer
	core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(&buf), zapcore.DebugLevel)
	log := zap.New(core)
	s := Secret(secretValue)
	log.Info("secret",
		zap.Any("any", s),
		zap.Stringer("stringer", s),
		zap.Reflect("reflect", struct{ S Secret }{s}),
		zap.Any("struct", struct{ S Secret }{s}),
		zap.Any("slice", []Secret{s}),
		zap.Stringers("stringers", []Secret{s}),
	)
	log.Sugar().Infow("sugared", "s", s)
	log.Sugar().Infof("formatted %v %s", s, s)
	if err := log.Sync(); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	out := buf.String()
	if strings.Contains(out, secretValue) {
		t.Fatalf("zap output leaked the secret: %s", out)
	}
	if n := strings.Count(out, Redacted); n != 9 {
		t.Errorf("zap output has %d redaction markers, want 9: %s", n, out)
	}
}

func TestSecretInSlog(t *testing.T) {
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("secret", "s", Secret(secretValue))
	assertRedacted(t, "slog", buf.String())
}
