package config

// Setting describes one configuration setting for code outside this
// package, such as the deployment artifacts' tests: its YAML key, its
// environment variable, its default in the environment's text form ("" when
// it has none), and whether it is a secret.
type Setting struct {
	Key     string
	Env     string
	Default string
	Secret  bool
}

// Settings lists every configuration setting, in the order Load reads them.
func Settings() []Setting {
	out := make([]Setting, len(settings))
	for i, s := range settings {
		out[i] = Setting{Key: s.key, Env: s.env, Default: s.fallback, Secret: s.secret}
	}
	return out
}
