// Package netguard owns erpgate's outbound address policy: which network
// addresses erpgate may connect to when someone outside chose the host (a
// Client ID Metadata Document's URL, an ERP's address in production). It
// judges the address actually dialled, after DNS resolution, so a name that
// resolves to a private address, at first or after a rebinding, is refused
// as well as the literal address.
package netguard
