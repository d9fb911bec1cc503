package config

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// fieldMap renders fields to strings keyed by field name.
func fieldMap(fields []zap.Field) map[string]string {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range fields {
		f.AddTo(enc)
	}
	out := make(map[string]string, len(enc.Fields))
	for k, v := range enc.Fields {
		out[k] = fmt.Sprint(v)
	}
	return out
}

func TestLogFieldsNameEverySettingAndHideSecrets(t *testing.T) {
	cfg := mustLoad(t, validEnv().with("ERPGATE_ENCRYPTION_KEYS", "new:"+testKeyMaterial+",old:"+testKeyMaterial), "")
	fields := fieldMap(cfg.LogFields())
	for _, s := range settings {
		if _, ok := fields[s.key]; !ok {
			t.Errorf("LogFields has no field %q", s.key)
		}
	}
	for _, key := range []string{"database_url", "admin_token", "encryption_keys"} {
		if fields[key] != "is set" {
			t.Errorf("%s = %q, want \"is set\"", key, fields[key])
		}
	}
	if fields["encryption_key_ids"] != "[new old]" {
		t.Errorf("encryption_key_ids = %q, want [new old]", fields["encryption_key_ids"])
	}

	var buf bytes.Buffer
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(&buf), zapcore.DebugLevel))
	log.Info("configuration", cfg.LogFields()...)
	log.Info("whole config", zap.Any("config", cfg), zap.Reflect("reflected", cfg))
	log.Sugar().Infof("printed %v %+v %#v", cfg, cfg, *cfg)
	assertNoSecrets(t, "log output", buf.String())
	assertNoSecrets(t, "Sprintf", fmt.Sprintf("%v %+v %#v", cfg, cfg, *cfg))
}

func TestLogFieldsWhenSecretsAreMissing(t *testing.T) {
	cfg, err := LoadDatabaseOnly(env{"DATABASE_URL": testDatabaseURL}.lookup, "")
	if err != nil {
		t.Fatalf("LoadDatabaseOnly: %v", err)
	}
	fields := fieldMap(cfg.LogFields())
	if fields["admin_token"] != "not set" || fields["encryption_keys"] != "not set" {
		t.Errorf("missing secrets logged as %q / %q, want \"not set\"", fields["admin_token"], fields["encryption_keys"])
	}
}

// TestErrorsNeverShowSecrets puts secrets in places that produce problems
// and checks that no problem echoes them.
func TestErrorsNeverShowSecrets(t *testing.T) {
	leakyKey := "k1:" + testKeyMaterial[:20]
	cases := []env{
		validEnv().with("DATABASE_URL", "mysql://erpgate:"+testDBPassword+"@db/x"),
		validEnv().with("DATABASE_URL", "postgres://erpgate:"+testDBPassword+"@db:notaport/x"),
		validEnv().with("ERPGATE_ADMIN_TOKEN", "short-"+testDBPassword),
		validEnv().with("ERPGATE_ENCRYPTION_KEYS", leakyKey+","+testKeyMaterial+",bad id:"+testKeyMaterial),
		// A secret pasted into a setting whose problems quote their value.
		validEnv().with("ERPGATE_LOG_LEVEL", testAdminToken),
	}
	for i, e := range cases {
		_, err := Load(e.lookup, "")
		if err == nil {
			t.Fatalf("case %d: Load succeeded, want an error", i)
		}
		assertNoSecrets(t, fmt.Sprintf("case %d error", i), err.Error())
		if strings.Contains(err.Error(), testKeyMaterial[:20]) {
			t.Errorf("case %d: error shows key material: %s", i, err)
		}
	}

	path := writeYAML(t, "admin_token: [\""+testAdminToken+"\"]\ndatabase_url: {url: \""+testDatabaseURL+"\"}\n")
	_, err := Load(validEnv().lookup, path)
	if err == nil {
		t.Fatal("Load succeeded with mis-shaped secrets in the file")
	}
	assertNoSecrets(t, "file error", err.Error())
}

func assertNoSecrets(t *testing.T, what, text string) {
	t.Helper()
	for _, secret := range []string{testAdminToken, testDBPassword, testDatabaseURL, testKeyMaterial} {
		if strings.Contains(text, secret) {
			t.Errorf("%s contains a secret (%.6s…):\n%s", what, secret, text)
		}
	}
}
