package connector

import (
	"context"
	"net/http"
)

// AdminProof is implemented by a connector that can tell whether the person
// behind an ERP token administers that ERP. Self-service registration and
// the site owner's page let a person in only when it says so: nobody can
// register or manage an ERP they do not administer.
//
// The check runs as the signed-in person (hc carries their token, from the
// outbound transport, so it reaches only the site's own address), right
// after their sign-in. docs/registration.md names the ERP calls each
// connector makes and why they prove what they claim.
type AdminProof interface {
	// CheckAdmin returns whether user, whose token is in hc, is an
	// administrator of site. It returns an error only when the ERP's answer
	// could not be read at all (unreachable, 5xx, a body that is not the
	// ERP's); "not an administrator" is an AdminCheck with Admin false.
	CheckAdmin(ctx context.Context, site Site, hc *http.Client, user UpstreamUser) (AdminCheck, error)
}

// AdminCheck is an administrator check's answer.
type AdminCheck struct {
	Admin bool
	// Evidence says what the ERP answered, in words safe to show the
	// person and to log ("has the System Manager role", "lacks the System
	// Manager role"). Never a token or an ERP body.
	Evidence string
}
