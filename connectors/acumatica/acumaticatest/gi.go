package acumaticatest

import (
	"fmt"
	"strings"
	"time"
)

// CanaryInquiry is the entity-set name of the access-gate inquiry.
const CanaryInquiry = "MCPAccess"

// AdminInquiry is the administrators' inquiry of registration: a generic
// inquiry over PX.SM.UsersInRoles (columns Username, Rolename), published
// with access rights for the Administrator role only. Its rows are the
// simulator's users' roles at the time of the request.
const AdminInquiry = "MCPAdmin"

// Inquiry is a Generic Inquiry exposed through OData v4.
type Inquiry struct {
	// Name is the entity-set name (the inquiry title, spaces allowed).
	Name string
	// Screen is the inquiry's published screen ID.
	Screen string
	// Requires lists the forms whose rights a user needs to read the data.
	Requires []string
	Columns  []InquiryColumn
	// Parameters are the inquiry's parameters; an inquiry with parameters
	// is also exposed as the function "<TypeName>_WithParameters".
	Parameters []InquiryParameter
	// Rows are the result rows (column name → Go value; absent = null).
	Rows []map[string]any
	// match tells whether a row satisfies the given parameter values.
	match func(row map[string]any, params map[string]string) bool
}

// InquiryColumn is a result column with its EDM type.
type InquiryColumn struct {
	Name string
	// Type is the EDM type: Edm.String, Edm.Int32, Edm.Decimal,
	// Edm.Boolean, Edm.DateTimeOffset or Edm.Guid.
	Type string
	// Key marks the key fields of the source tables.
	Key bool
	// Padded is the CHAR(n) width the legacy-shaped parameterised response
	// pads the value to (0 = no padding).
	Padded int
	// Formula marks a column the inquiry calculates with a formula: OData
	// cannot filter or sort on it, and a $filter or $orderby naming it is
	// answered 200 with no body (api-facts.md 6.3, [G26]).
	Formula bool
}

// InquiryParameter is an inquiry parameter.
type InquiryParameter struct {
	Name string
	Type string
}

// TypeName is the EDM entity-type name: the entity-set name without
// hyphens and spaces ("BI-LeadConversion" → "BILeadConversion").
func (q *Inquiry) TypeName() string {
	return strings.NewReplacer("-", "", " ", "").Replace(q.Name)
}

func (q *Inquiry) column(name string) *InquiryColumn {
	for i := range q.Columns {
		if q.Columns[i].Name == name {
			return &q.Columns[i]
		}
	}
	return nil
}

func buildInquiries(g *gen) []*Inquiry {
	return []*Inquiry{canaryInquiry(g), adminInquiry(demoUsers()), customerContactsInquiry(g), openInvoicesInquiry(g),
		salesOrdersInquiry(g), itemAvailabilityInquiry(g), storageDetailsInquiry(g)}
}

func canaryInquiry(g *gen) *Inquiry {
	return &Inquiry{Name: CanaryInquiry, Screen: "GI000001",
		Columns: []InquiryColumn{{Name: "CompanyID", Type: "Edm.Int32", Key: true}, {Name: "CompanyName", Type: "Edm.String"}},
		Rows:    []map[string]any{{"CompanyID": int64(2), "CompanyName": "Demo Company"}}}
}

// adminInquiry lists the roles of users, one row per user and role: the
// seeded rows are the demo users'.
func adminInquiry(users []User) *Inquiry {
	return &Inquiry{Name: AdminInquiry, Screen: "GI000007",
		Columns: []InquiryColumn{{Name: "Username", Type: "Edm.String", Key: true}, {Name: "Rolename", Type: "Edm.String", Key: true}},
		Rows:    usersInRoles(users)}
}

func usersInRoles(users []User) []map[string]any {
	var rows []map[string]any
	for _, u := range users {
		for _, r := range u.Roles {
			rows = append(rows, map[string]any{"Username": u.Username, "Rolename": r})
		}
	}
	return rows
}

// inquiryRows are the rows an inquiry answers with now: the seeded rows,
// or, for the administrators' inquiry, the roles of the simulator's users
// as they are at this request (users added with AddUser included).
func (s *Simulator) inquiryRows(q *Inquiry) []map[string]any {
	if q.Name != AdminInquiry {
		return q.Rows
	}
	return usersInRoles(s.Users())
}

func customerContactsInquiry(g *gen) *Inquiry {
	q := &Inquiry{Name: "Customer Contacts", Screen: "GI000002", Requires: []string{"AR303000"},
		Columns: []InquiryColumn{{Name: "CustomerID", Type: "Edm.String", Key: true}, {Name: "CustomerName", Type: "Edm.String"},
			{Name: "CustomerClass", Type: "Edm.String"}, {Name: "Email", Type: "Edm.String"}, {Name: "Phone1", Type: "Edm.String"},
			{Name: "City", Type: "Edm.String"}, {Name: "State", Type: "Edm.String"}, {Name: "PostalCode", Type: "Edm.String"},
			{Name: "AddressLine1", Type: "Edm.String"}, {Name: "AddressLine2", Type: "Edm.String"},
			{Name: "ContactID", Type: "Edm.Int32", Key: true}, {Name: "AddressID", Type: "Edm.Int32", Key: true}}}
	for i, c := range g.customers {
		mc := c.Link("MainContact")
		a := mc.Link("Address")
		row := map[string]any{"CustomerID": c.String("CustomerID"), "CustomerName": c.String("CustomerName"),
			"CustomerClass": c.String("CustomerClass"), "Email": mc.String("Email"), "Phone1": mc.String("Phone1"),
			"City": a.String("City"), "State": a.String("State"), "PostalCode": a.String("PostalCode"),
			"AddressLine1": a.String("AddressLine1"), "ContactID": mc.Int("ContactID"), "AddressID": int64(5000 + i)}
		if s := a.String("AddressLine2"); s != "" {
			row["AddressLine2"] = s
		}
		q.Rows = append(q.Rows, row)
	}
	return q
}

func openInvoicesInquiry(g *gen) *Inquiry {
	q := &Inquiry{Name: "AR-OpenInvoices", Screen: "GI000003", Requires: []string{"AR301000"},
		Columns: []InquiryColumn{{Name: "Type", Type: "Edm.String", Key: true}, {Name: "ReferenceNbr", Type: "Edm.String", Key: true},
			{Name: "Customer", Type: "Edm.String"}, {Name: "CustomerName", Type: "Edm.String"},
			{Name: "Date", Type: "Edm.DateTimeOffset"}, {Name: "DueDate", Type: "Edm.DateTimeOffset"},
			{Name: "Status", Type: "Edm.String"}, {Name: "Amount", Type: "Edm.Decimal"}, {Name: "Balance", Type: "Edm.Decimal"},
			{Name: "Currency", Type: "Edm.String"}, {Name: "OnHold", Type: "Edm.Boolean"}}}
	names := map[string]string{}
	for _, c := range g.customers {
		names[c.String("CustomerID")] = c.String("CustomerName")
	}
	for _, inv := range g.invoices {
		if inv.Decimal("Balance") == 0 {
			continue
		}
		q.Rows = append(q.Rows, map[string]any{"Type": inv.String("Type"), "ReferenceNbr": inv.String("ReferenceNbr"),
			"Customer": inv.String("Customer"), "CustomerName": names[inv.String("Customer")],
			"Date": inv.Time("Date"), "DueDate": inv.Time("DueDate"), "Status": inv.String("Status"),
			"Amount": InquiryDecimal{inv.Decimal("Amount"), 4}, "Balance": InquiryDecimal{inv.Decimal("Balance"), 4},
			"Currency": "USD", "OnHold": inv.Bool("Hold")})
	}
	return q
}

func salesOrdersInquiry(g *gen) *Inquiry {
	q := &Inquiry{Name: "SO-SalesOrders", Screen: "GI000004", Requires: []string{"SO301000"},
		Columns: []InquiryColumn{{Name: "OrderType", Type: "Edm.String", Key: true}, {Name: "OrderNbr", Type: "Edm.String", Key: true},
			{Name: "CustomerID", Type: "Edm.String"}, {Name: "Date", Type: "Edm.DateTimeOffset"}, {Name: "Status", Type: "Edm.String"},
			{Name: "OrderTotal", Type: "Edm.Decimal"}, {Name: "LineCount", Type: "Edm.Int32", Formula: true},
			{Name: "NoteID", Type: "Edm.Guid"}, {Name: "LastModifiedOn", Type: "Edm.DateTimeOffset"}}}
	for _, so := range g.salesOrders {
		q.Rows = append(q.Rows, map[string]any{"OrderType": so.String("OrderType"), "OrderNbr": so.String("OrderNbr"),
			"CustomerID": so.String("CustomerID"), "Date": so.Time("Date"), "Status": so.String("Status"),
			"OrderTotal": InquiryDecimal{so.Decimal("OrderTotal"), 4}, "LineCount": int64(len(so.Detail("Details"))),
			"NoteID": so.ID, "LastModifiedOn": so.Time("LastModified")})
	}
	return q
}

// itemAvailabilityInquiry mirrors the documented "Item Availability Data"
// inquiry with an InventoryID parameter.
func itemAvailabilityInquiry(g *gen) *Inquiry {
	q := &Inquiry{Name: "Item Availability Data", Screen: "GI000005", Requires: []string{"IN202500"},
		Columns: []InquiryColumn{{Name: "InventoryID", Type: "Edm.String", Key: true, Padded: 30},
			{Name: "Warehouse", Type: "Edm.String", Key: true, Padded: 10}, {Name: "Description", Type: "Edm.String"},
			{Name: "QtyOnHand", Type: "Edm.Decimal"}, {Name: "QtyAvailable", Type: "Edm.Decimal"},
			{Name: "Subitem", Type: "Edm.String"}},
		Parameters: []InquiryParameter{{Name: "InventoryID", Type: "Edm.String"}}}
	for _, it := range g.stockItems {
		for _, wd := range it.Detail("WarehouseDetails") {
			onHand := wd.Decimal("QtyOnHand")
			avail := onHand - DecimalFromInt(int64(len(it.String("InventoryID"))%3))
			if avail < 0 {
				avail = 0
			}
			q.Rows = append(q.Rows, map[string]any{"InventoryID": it.String("InventoryID"), "Warehouse": wd.String("WarehouseID"),
				"Description": it.String("Description"), "QtyOnHand": InquiryDecimal{onHand, 6},
				"QtyAvailable": InquiryDecimal{avail, 6}, "Subitem": "0"})
		}
	}
	q.match = func(row map[string]any, p map[string]string) bool {
		v := p["InventoryID"]
		return v == "" || strings.EqualFold(strings.TrimSpace(v), row["InventoryID"].(string))
	}
	return q
}

// storageDetailsInquiry mirrors the documented "DB-StorageDetails" inquiry
// with a Warehouse parameter.
func storageDetailsInquiry(g *gen) *Inquiry {
	q := &Inquiry{Name: "DB-StorageDetails", Screen: "GI000006", Requires: []string{"IN204000"},
		Columns: []InquiryColumn{{Name: "Warehouse", Type: "Edm.String", Key: true, Padded: 10},
			{Name: "Location", Type: "Edm.String", Key: true, Padded: 10}, {Name: "InventoryID", Type: "Edm.String", Key: true, Padded: 30},
			{Name: "Description", Type: "Edm.String"}, {Name: "QtyOnHand", Type: "Edm.Decimal"},
			{Name: "LastReceiptDate", Type: "Edm.DateTimeOffset"}},
		Parameters: []InquiryParameter{{Name: "Warehouse", Type: "Edm.String"}}}
	for i, it := range g.stockItems {
		for _, wd := range it.Detail("WarehouseDetails") {
			q.Rows = append(q.Rows, map[string]any{"Warehouse": wd.String("WarehouseID"), "Location": "STOCK",
				"InventoryID": it.String("InventoryID"), "Description": it.String("Description"),
				"QtyOnHand":       InquiryDecimal{wd.Decimal("QtyOnHand"), 6},
				"LastReceiptDate": g.now.AddDate(0, 0, -(i%90)-1).Truncate(time.Hour)})
		}
	}
	q.match = func(row map[string]any, p map[string]string) bool {
		v := p["Warehouse"]
		return v == "" || strings.EqualFold(strings.TrimSpace(v), row["Warehouse"].(string))
	}
	return q
}

// InquiryDecimal is a decimal inquiry value with its column scale.
type InquiryDecimal struct {
	D     Decimal
	Scale int
}

// String prints the value with its column scale ("1999.000000").
func (d InquiryDecimal) String() string { return d.D.Format(d.Scale) }

// InquiryValue converts a row value to the JSON text the plain OData
// response carries for it (tests use it for expected values).
func InquiryValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return jsonString(x)
	case int64:
		return fmt.Sprint(x)
	case bool:
		return fmt.Sprint(x)
	case InquiryDecimal:
		return x.String()
	case time.Time:
		return jsonString(formatGIDateTime(x))
	}
	return "null"
}
