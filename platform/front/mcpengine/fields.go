package mcpengine

import (
	"encoding/json"
	"errors"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/redact"
)

// refuseRedactedFields refuses a call whose arguments filter, sort,
// search, select or expand on a field the call's redaction rules cover
// (connector.Tool.Fields). Every result would show [REDACTED], but a
// filter is an oracle: a binary search over "TaxID gt '…'" recovers the
// value in about 70 calls (issue 14, item 3).
func refuseRedactedFields(ct *compiledTool, redactor *redact.Redactor, args json.RawMessage) error {
	if ct.tool.Fields == nil {
		return nil
	}
	refs, err := ct.tool.Fields(args)
	if err != nil {
		var te *toolerr.Error
		if errors.As(err, &te) {
			return te
		}
		return toolerr.Wrap(toolerr.InvalidArgument, err, "the arguments name fields that could not be read")
	}
	for _, f := range refs {
		if part, ok := redactor.SensitivePath(f.Name); ok {
			return toolerr.New(toolerr.InvalidArgument,
				"%s names the field %s, which erpgate redacts. Filtering, sorting, searching, selecting or expanding on a redacted field is refused, because repeated calls would reveal its value; leave %s out of %s",
				f.Arg, part, part, f.Arg)
		}
	}
	return nil
}
