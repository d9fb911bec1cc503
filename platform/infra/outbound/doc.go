// Package outbound is the one transport for all ERP traffic. Every connector
// request goes through a client built here, which:
//
//   - adds the caller's credentials only to requests for the site's own
//     origin, and follows redirects only within that origin;
//   - never sends a path with a "." or ".." segment (also spelt %2F, %2e
//     or with "\"), which would reach another of the site's addresses;
//   - honours the call's budget through the request context;
//   - retries a retryable read (408, 429, 502, 503, 504 or a failed
//     connection) once, honouring Retry-After when it fits in the budget;
//   - bounds every response body, failing with RESPONSE_TOO_LARGE instead
//     of buffering an unbounded body;
//   - turns transport failures into classified tool errors.
package outbound
