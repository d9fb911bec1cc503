package pagekit

import (
	"math"
	"net/http"
	"strconv"
	"time"
)

// RenderTooManyLookups answers a page request whose source has sent too
// many links that lead nowhere (platform/infra/sourcelimit.Lookups): 429,
// with Retry-After of wait in whole seconds.
func (k *Kit) RenderTooManyLookups(w http.ResponseWriter, wait time.Duration) error {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	in := "in " + strconv.Itoa(secs) + " seconds"
	if secs == 1 {
		in = "in 1 second"
	}
	return k.RenderError(w, http.StatusTooManyRequests, ErrorPage{
		Title:   "Too many requests",
		Message: "erpgate has had too many requests from your network for links that lead nowhere. Try again " + in + ".",
		Next:    "If many people share your network's address, ask your erpgate operator.",
	})
}
