// Package acumaticatest is a faithful HTTP simulator of Acumatica ERP
// 2024 R2 / 2025 R2 for tests and local development: a real server (like
// net/http/httptest) answering the contract-based REST API, the OData
// endpoint for Generic Inquiries and the OAuth 2.0 / OpenID Connect
// identity server, with a deterministic demo company.
//
// # Contract REST: /entity/Default/{24.200.001|25.200.001}/…
//
// Entities and fields come from Acumatica's own OpenAPI document for
// Default/24.200.001 (data/swagger-Default-24.200.001.json); 25.200.001 is
// derived from it with the differences Acumatica documents (see
// schema_versions.go). Records serialise as the real server does: id,
// rowNumber, note, fields sorted case-insensitively, custom, _links;
// {"value":…} wrappers, {} for empty fields, decimals with their column
// scale, "2024-01-01T00:00:00+00:00" dates; detail collections and linked
// entities only with $expand. Lists take an OData v3 $filter subset,
// $select, $top and $skip (no default page size, no count). As on a live
// instance, substringof, startswith or endswith compared with true
// ("substringof('x', F) eq true") matches no row, without an error.
//
// Error bodies follow the real ones: 401 HttpError; 403 "You have
// insufficient rights to access the object (AR301000)."; 500 "No entity
// satisfies the condition." for a missing key; 500 KeyNotFoundException
// for an unknown $select field; 500 ODataException for a bad $filter; 500
// CannotOptimizeException for a GET list of a keyless inquiry entity
// (*Inquiry, CompaniesStructure), which Acumatica reads only with a PUT
// that expands Results (the simulator serves no inquiry rows); 422
// entity-with-errors from PUT (without its record-level error under
// Options.FieldErrorsOnly); 400 for an empty PUT body; 429 plain text
// when more requests are in flight than Options.ConcurrencyLimit; 500
// PXSetupNotEnteredException for every entity on a tenant whose set-up
// is missing (Options.SetupNotEntered). Options.ArchivedBefore archives
// older documents: they are left out of lists and not found by key unless
// the request sends PX-ApiArchive: SHOW.
//
// # Generic Inquiries: /t/{Tenant}/api/odata/gi
//
// Service document, $metadata (EDMX 4.0), data with an OData v4 $filter
// subset, $select, $orderby, $top, $skip, and <Type>_WithParameters(…)
// functions; a $filter or $orderby naming a formula column (SO-SalesOrders'
// LineCount) is answered 200 with no body. An unfiltered read answers
// with "@odata.context" and plain JSON values; a parameterised or filtered
// one, as Acumatica's documented examples do, with "odata.metadata",
// decimals as strings, date-times without an offset and CHAR key columns
// space-padded. Inquiries: MCPAccess (the
// access-gate canary), Customer Contacts, AR-OpenInvoices, SO-SalesOrders,
// Item Availability Data (parameter InventoryID) and DB-StorageDetails
// (parameter Warehouse).
// Bearer tokens (scope api) or HTTP Basic authentication.
//
// # Identity: /identity/connect/{authorize,token,userinfo,revocation}
//
// Discovery at /identity/.well-known/openid-configuration (also at
// /.well-known/openid-configuration). Authorization code with PKCE (plain,
// S256) through an HTML sign-in form (fields "request", "username",
// "password" posted to /identity/account/login) and a consent form
// ("request", "button"=yes|no posted to /identity/consent);
// CompleteAuthorization drives both. Password grant, refresh with rotation
// (the presented refresh token dies on use), opaque 43-character tokens,
// client_id "GUID@Tenant", client secret as form fields or HTTP Basic.
// A user holding a live api-scope token occupies one API-user seat; a new
// sign-in beyond Options.SeatLimit is refused with 429 "API Login Limit".
// A Bearer call that needs a new session when no seat is free is
// redirected (302) to /Frames/Error.aspx, an anonymous HTML page answered 200.
// ChangePassword ends the tokens issued before it: their calls get HTTP
// 500 "Error: Invalid credentials. Please try again." (PXException), as a
// refused cookie login does; Options.InvalidCredentials500 makes the token
// endpoint refuse a wrong or changed password with that body too.
// Token calls are stateless: no session cookie is issued or honoured for
// scope api (api:concurrent_access opens a session per request unless its
// ASP.NET_SessionId cookie is replayed).
//
// # Demo users (tenant "Demo")
//
//	admin           admin-P@ss1    role full       every form and inquiry; the Administrator role
//	ar.clerk        clerk-P@ss1    role no-ar      no AR forms (AR*: Customer, Invoice, Payment, …) nor AR inquiries
//	no.canary       canary-P@ss1   role no-canary  everything but the MCPAccess inquiry
//	api.service     service-P@ss1  role service    dedicated API user for service connections
//	no.api          noapi-P@ss1    role no-api     no API licence: token requests fail
//	office.manager  office-P@ss1   role non-admin  every form and inquiry but MCPAdmin; not an Administrator
//	sales.viewer    viewer-P@ss1   role sales-viewer  reads everything, View Only on Sales Orders: an update saves nothing (200), an insert is 403
//
// Only admin has the Administrator role (User.Roles). The administrators'
// inquiry MCPAdmin (over PX.SM.UsersInRoles: Username, Rolename) lists
// every user's roles and is readable by Administrators only; the others get
// 403 "You have insufficient rights to access the object (GI000007).".
//
// User(role) returns a user by role. SetInquiryAccess changes one user's
// right to an inquiry at run time (an administrator withdrawing the canary).
//
// # Connected applications
//
//	2C8A6E3D-1B4F-4E0A-9D7C-5F3B8A1E6C24@Demo  secret Xq2rT9vLmN4pW7sK1bZ3cD8e  authorization code, redirect http://localhost:8080/callback
//	7F1E0B9A-3C2D-4B5E-8A6F-0D1C2B3A4E5F@Demo  secret Sv4uR8wY2zA6cE0gI3kM5oQ7  resource owner password (service connections)
//
// RegisterClient, RegisterServiceClient and AddClient add more, as does an
// administrator in a browser: sign in at /Frames/Login.aspx, then
// Connected Applications at /Main?ScreenId=SM303010 (Administrator role
// only; others get "You have insufficient rights to access the object
// (SM303010)."), where saving a client name, flow and redirect URI shows
// the generated client ID and the shared secret once. AddUser adds users.
//
// # Data
//
// Data() exposes the generated company (60 customers, 35 vendors, 220
// stock items, 320 sales orders, 320 AR invoices, 220 AP bills with lines,
// and some 45 entity types across finance, receivables, payables, sales,
// purchasing, inventory, CRM, projects, time and expenses, and
// organisation) so tests compute expected values independently of the
// HTTP layer. The data depends only on Options.Now.
//
// # Virtual directory
//
// Options.PathPrefix mounts the instance under a virtual directory, the
// usual on-premises shape (https://host/AcumaticaERP). Every surface is
// then served under it (matched without regard to case, as IIS does),
// every link the simulator writes carries it, and any other path gets
// IIS's HTML 404, counted by OutsideRequests.
//
// # Known simplifications
//
// Where public material is silent the simulator picks the stricter or
// the more common behaviour: 401/403/404 bodies are ASP.NET HttpError
// {"message":…}; an unknown $expand name is ignored; "A/B" in $expand
// also expands A; rowNumber restarts at 1 on every page; a $filter path
// through a detail collection reads the first line; comparisons with an
// empty field are false (SQL NULL semantics); $custom is accepted and
// ignored. API-user seats count distinct users with a live api-scope
// token (a refresh does not take a second seat). Declined requests (429)
// are answered at once instead of after the real 10-minute queue. Writes
// (PUT, PATCH, DELETE, actions) validate references, key fields and a few
// required fields; a sales order also gets the graph's defaults, prices
// and totals, is put On Hold when entered and its Status follows Hold
// (contract_rules.go); other entities get no business logic. A user with
// View Only on a form (sales.viewer on SO301000) who PUTs an update of a
// record gets 200 with the record as it is and nothing saved, as on the
// real server (a PUT's 200 does not prove the values saved); public
// material is silent on View Only inserts, PATCH, DELETE and actions,
// which get the form's 403. Writes show in every user's reads at once; inquiry rows are
// computed once and do not follow writes. A processing action (a release,
// creating a shipment) is a long operation: 202 with its status URL, which
// answers 202 on the first poll and 204 on the next; until then every other
// request on its form in the same session is answered 409 "A long operation
// is running…" as an HttpError (longop.go; the swagger gives the text, not
// the body).
package acumaticatest
