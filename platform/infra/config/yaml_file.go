package config

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// fileValues holds what a YAML file set, by dotted key.
type fileValues map[string]value

// readFile reads the YAML configuration file at path. It reports every
// problem it finds — unknown keys, duplicate keys, values of the wrong shape
// — and returns the values it could read. ok is false when the file could
// not be read or parsed at all, so required-setting checks would mislead.
func readFile(path string) (vals fileValues, problems []string, ok bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, []string{fmt.Sprintf("config file: %v", err)}, false
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, []string{fmt.Sprintf("config file %s is not valid YAML: %s", path, syntaxProblem(err))}, false
	}
	r := fileReader{path: path, vals: fileValues{}}
	switch {
	case doc.Kind == 0 || len(doc.Content) == 0:
		// An empty file or one holding only comments sets nothing.
	case doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].Tag == "!!null":
	case doc.Content[0].Kind != yaml.MappingNode:
		r.problem(doc.Content[0], "", "the top level must be a mapping of keys to values")
	default:
		r.mapping(doc.Content[0], "")
	}
	return r.vals, r.problems, true
}

// anchorName is the name the YAML parser quotes in its problems with an
// alias or anchor.
var anchorName = regexp.MustCompile(`anchor '[^']*'`)

// syntaxProblem is the parser's problem without its "yaml: " prefix and
// without the name of an alias: an unquoted value that starts with * (a
// token, a password) is read as an alias, and the parser names it.
func syntaxProblem(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if anchorName.MatchString(msg) {
		return anchorName.ReplaceAllString(msg, "anchor") + " (a value that starts with * or & is read as an alias or anchor: quote it)"
	}
	return msg
}

// fileReader walks the YAML tree against the settings table.
type fileReader struct {
	path     string
	vals     fileValues
	problems []string
}

func (r *fileReader) problem(n *yaml.Node, key, msg string) {
	if key == "" {
		r.problems = append(r.problems, fmt.Sprintf("config file %s line %d: %s", r.path, n.Line, msg))
		return
	}
	r.problems = append(r.problems, fmt.Sprintf("%s (%s line %d): %s", key, r.path, n.Line, msg))
}

func (r *fileReader) mapping(m *yaml.Node, prefix string) {
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		keyNode, valNode := m.Content[i], resolveAlias(m.Content[i+1])
		key := prefix + keyNode.Value
		if line, dup := seen[key]; dup {
			r.problem(keyNode, key, fmt.Sprintf("set twice (first on line %d)", line))
			continue
		}
		seen[key] = keyNode.Line
		if s, ok := lookupSetting(key); ok {
			r.leaf(s, key, valNode)
			continue
		}
		if isSection(key) {
			switch {
			case valNode.Kind == yaml.MappingNode:
				r.mapping(valNode, key+".")
			case isNull(valNode):
			default:
				r.problem(valNode, key, "must be a mapping of keys to values")
			}
			continue
		}
		if !looksLikeAKey(key) {
			// A value written where a key goes (a token, a URL): it is
			// not repeated.
			r.problem(keyNode, "", "unknown key, not repeated here since it may hold a credential")
			continue
		}
		r.problem(keyNode, "", fmt.Sprintf("unknown key %q", key))
	}
}

func (r *fileReader) leaf(s *setting, key string, n *yaml.Node) {
	from := fmt.Sprintf("%s (%s line %d)", key, r.path, n.Line)
	switch {
	case isNull(n):
		return
	case n.Kind == yaml.ScalarNode && s.list:
		r.vals[key] = value{items: splitList(n.Value), from: from}
	case n.Kind == yaml.ScalarNode:
		r.vals[key] = value{text: strings.TrimSpace(n.Value), from: from}
	case n.Kind == yaml.SequenceNode && s.list:
		items := make([]string, 0, len(n.Content))
		for _, item := range n.Content {
			item = resolveAlias(item)
			if item.Kind != yaml.ScalarNode {
				r.problem(item, key, "list entries must be plain values")
				return
			}
			if text := strings.TrimSpace(item.Value); text != "" {
				items = append(items, text)
			}
		}
		r.vals[key] = value{items: items, from: from}
	case s.list:
		r.problem(n, key, "must be a list of values")
	default:
		r.problem(n, key, "must be a single value, not a list or mapping")
	}
}

// isSection reports whether key names a section that holds settings, such
// as "upstream".
func isSection(key string) bool {
	for _, s := range settings {
		if strings.HasPrefix(s.key, key+".") {
			return true
		}
	}
	return false
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// resolveAlias follows YAML aliases (*name) to the node they stand for.
func resolveAlias(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// looksLikeAKey reports whether an unknown key is written as erpgate's
// keys are (lower-case words joined by _, - or ., no digits), and so may
// be named in a problem: a typo of a key. Anything else may be a value
// pasted where a key goes, a token or a password, and is not repeated.
func looksLikeAKey(key string) bool {
	if key == "" || len(key) > 64 {
		return false
	}
	for _, r := range key {
		if (r < 'a' || r > 'z') && r != '_' && r != '-' && r != '.' {
			return false
		}
	}
	return true
}
