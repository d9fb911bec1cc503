package rawjson

import (
	"encoding/json"
)

// Walks of text this package has already checked: a row Elements
// returned, a member value EachMember gave. They only find where names,
// values and elements end, and check nothing again, which makes them
// several times faster than the checking walks. On text that is not valid
// JSON their results are meaningless, but they never read outside it and
// always return.

// EachMemberChecked calls fn with each member of b, an object this package
// has checked, in order.
func EachMemberChecked(b []byte, fn func(Field)) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return
	}
	for i = skipSpace(b, i+1); i < len(b) && b[i] == '"'; {
		keyEnd, escaped := skipString(b, i)
		if keyEnd < 0 {
			return
		}
		key := b[i:keyEnd:keyEnd]
		if i = skipSpace(b, keyEnd); i >= len(b) || b[i] != ':' {
			return
		}
		start := skipSpace(b, i+1)
		stop := skipValue(b, start)
		if stop <= start {
			return
		}
		fn(Field{Name: key, Value: b[start:stop:stop], escaped: escaped})
		if i = skipSpace(b, stop); i >= len(b) || b[i] != ',' {
			return
		}
		i = skipSpace(b, i+1)
	}
}

// ElementsChecked returns the elements of b, an array this package has
// checked, as slices of b.
func ElementsChecked(b []byte) []json.RawMessage {
	out := []json.RawMessage{}
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return out
	}
	for i = skipSpace(b, i+1); i < len(b) && b[i] != ']'; {
		stop := skipValue(b, i)
		if stop <= i {
			return out
		}
		out = append(out, b[i:stop:stop])
		if i = skipSpace(b, stop); i >= len(b) || b[i] != ',' {
			return out
		}
		i = skipSpace(b, i+1)
	}
	return out
}

// ValueEndChecked returns the index just past the value that starts at
// b[i], in text this package has checked; i itself if none starts there.
func ValueEndChecked(b []byte, i int) int { return skipValue(b, i) }

// skipString returns the index just past the string whose opening quote
// is b[i], and whether it has escapes; -1 if it does not end. Plain bytes
// are skipped by str's table: most strings in ERP answers are a dozen
// bytes, too short for bytes.IndexByte or eight-byte words to pay.
func skipString(b []byte, i int) (int, bool) {
	escaped := false
	for j := i + 1; j < len(b); {
		for j < len(b) && plain[b[j]] {
			j++
		}
		if j >= len(b) {
			break
		}
		switch b[j] {
		case '"':
			return j + 1, escaped
		case '\\':
			escaped = true
			j += 2 // and the byte it escapes
		default:
			j++ // a control character or a byte of a multi-byte one
		}
	}
	return -1, false
}

// skipValue returns the index just past the value that starts at b[i];
// i itself if none does.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		end, _ := skipString(b, i)
		if end < 0 {
			return i
		}
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _ := skipString(b, j)
				if end < 0 {
					return i
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return i
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}
