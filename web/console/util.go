package console

import (
	"net/url"

	"go.uber.org/zap"
)

func zapErr(err error) zap.Field { return zap.Error(err) }

func urlQuery(s string) string { return url.QueryEscape(s) }
