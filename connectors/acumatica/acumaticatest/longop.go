package acumaticatest

import (
	"net/http"
	"strconv"
	"strings"
)

// Long operations (shared/erp-api/acumatica/api-facts.md §3.1, §3.3, §4,
// §8 item 7). A processing action (a release, creating a shipment or an
// invoice) runs on the server after the request: the action is answered
// 202 with Location …/<Entity>/<Action>/status/<guid>, whose GET answers
// 202 while it runs and 204 once done. Until then the operation locks its
// form for the session that started it: every other request on that form
// in the same session is answered 409 "A long operation is running for
// this screen in the current session. Please try again later." (the
// EntityController_409 and InvokeAction_409 of the 25.200.001 swagger). The
// simulator reports one build for both endpoint versions, and the lock is
// the build's, so 24.200.001 answers the same. The body is ASP.NET's
// HttpError with that message: the swagger gives the text, no body schema.
//
// The simulator's clock does not move, so an operation runs until its
// status has been polled longOperationPolls times: the first poll answers
// 202, the next 204.

// msgLongOperation is Acumatica's sentence for a form a long operation of
// the session holds.
const msgLongOperation = "A long operation is running for this screen in the current session. Please try again later."

// longOperationPolls is how many status polls a long operation answers
// 202 before it is done.
const longOperationPolls = 1

// longOperation is one action running in a session.
type longOperation struct {
	session string // principal.session of the request that started it
	screen  string // the form it holds
	polls   int
}

// isLongAction reports whether an action runs as a long operation:
// releases of documents and the sales order's processing actions, which
// real tenants answer 202 ([PM]; api-facts.md §4: "Releases in this
// tenant come back as HTTP 202"). Taking a document off hold
// (ReleaseFromHold, ReleaseFromCreditHoldSalesOrder) and the rest answer
// 204 at once.
func isLongAction(action string) bool {
	switch action {
	case "SalesOrderCreateShipment", "SalesOrderCreateReceipt", "PrepareSalesInvoice", "PrepareInvoice", "CreateAPBill":
		return true
	}
	return strings.HasPrefix(action, "Release") && !strings.HasPrefix(action, "ReleaseFrom")
}

// startLongOperation records an operation holding screen for session and
// returns its id.
func (s *Simulator) startLongOperation(session, screen string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.longOps == nil {
		s.longOps = map[string]*longOperation{}
	}
	s.longOpSeq++
	id := guid("long-operation/" + strconv.Itoa(s.longOpSeq))
	s.longOps[id] = &longOperation{session: session, screen: screen}
	return id
}

// formBusy reports whether a long operation of session holds screen.
func (s *Simulator) formBusy(session, screen string) bool {
	if session == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, op := range s.longOps {
		if op.session == session && op.screen == screen {
			return true
		}
	}
	return false
}

// pollLongOperation answers GET …/<Entity>/<Action>/status/<id>: 202 while
// the operation runs, 204 once it is done (it then no longer holds its
// form), 404 for an id the session does not know.
func (s *Simulator) pollLongOperation(w http.ResponseWriter, r *http.Request, p *principal, id string) {
	s.mu.Lock()
	op := s.longOps[id]
	if op == nil || op.session != p.session {
		s.mu.Unlock()
		writeNotFound(w, r)
		return
	}
	op.polls++
	done := op.polls > longOperationPolls
	if done {
		delete(s.longOps, id)
	}
	s.mu.Unlock()
	if done {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Location", r.URL.Path)
	w.WriteHeader(http.StatusAccepted)
}

// writeLongOperationRunning is the 409 of a form a long operation holds.
func writeLongOperationRunning(w http.ResponseWriter) {
	writeJSON(w, http.StatusConflict, httpError(msgLongOperation))
}
