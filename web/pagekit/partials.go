package pagekit

import (
	"fmt"
	"io/fs"
)

// WithPartials returns a kit whose pages may also use the templates in
// the files of fsys matching patterns: a section's shared parts (the
// console's navigation), or its definitions of the layout's blocks
// "nav" (after the brand in the header) and "bodyclass" (the body's
// class). Pages parsed with the returned kit render as the kit's do.
func (k *Kit) WithPartials(fsys fs.FS, patterns ...string) (*Kit, error) {
	t, err := k.layout.Clone()
	if err == nil {
		t, err = t.ParseFS(fsys, patterns...)
	}
	if err != nil {
		return nil, fmt.Errorf("pagekit: partials %v: %w", patterns, err)
	}
	c := *k
	c.layout = t
	return &c, nil
}
