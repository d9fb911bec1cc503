package acumaticatest

import (
	"fmt"
	"strings"
)

// itemClasses: class ID, description, item-ID prefix, base UOM, price range.
var itemClasses = []struct {
	id, descr, prefix, uom string
	lo, hi                 int
}{
	{"COMPUTERS", "Computers and laptops", "CPU", "EA", 400, 2500},
	{"COMPONENTS", "Computer components", "CMP", "EA", 20, 400},
	{"OFFICE", "Office supplies", "OFF", "BOX", 5, 60},
	{"FURNITURE", "Office furniture", "FRN", "EA", 80, 900},
	{"BATTERY", "Batteries and UPS", "BAT", "EA", 15, 600},
	{"FOOD", "Food and beverages", "FOD", "CASE", 10, 90},
	{"TOOLS", "Hand and power tools", "TLS", "EA", 12, 350},
	{"CABLES", "Cables and adapters", "CBL", "EA", 3, 45},
}

var itemNouns = []string{"Standard", "Pro", "Compact", "Deluxe", "Eco", "Heavy Duty", "Mini", "Max", "Classic", "Ultra", "Lite"}

// genInventory: item classes, warehouses, stock and non-stock items and
// item-warehouse settings.
func (g *gen) genInventory() {
	for i, c := range itemClasses {
		r := g.top("ItemClass", c.id, g.stamp(960+i))
		r.set("ClassID", c.id).set("Description", c.descr).set("ItemType", "Finished Good").set("BaseUOM", c.uom).
			set("SalesUOM", c.uom).set("PurchaseUOM", c.uom).set("StockItem", true).set("ValuationMethod", "Average").
			set("PostingClass", "DEFAULT").set("LotSerialClass", "NOTTRACKED").set("TaxCategoryID", "TAXABLE").
			set("DefaultWarehouseID", "MAIN").set("AvailabilityCalculationRule", "Default")
		g.ds.add(r)
	}
	for i, w := range [][2]string{{"MAIN", "Main warehouse"}, {"EAST", "East coast warehouse"},
		{"WEST", "West coast warehouse"}, {"RETAIL", "Retail store stock"}} {
		r := g.top("Warehouse", w[0], g.stamp(950+i))
		r.set("WarehouseID", w[0]).set("Description", w[1]).set("Active", true).
			set("ReceivingLocationID", "RECEIVING").set("ShippingLocationID", "SHIPPING").set("RMALocationID", "RMA").
			set("InventoryAccount", "13000").set("InventorySubaccount", "040000").set("COGSExpenseAccount", "50000").
			set("COGSExpenseSubaccount", "000000").set("SalesAccount", "40000").set("SalesSubaccount", "010000").
			set("POAccrualAccount", "20150").set("POAccrualSubaccount", "000000").set("OverrideInventoryAccountSubaccount", false)
		for j, loc := range []string{"RECEIVING", "SHIPPING", "RMA", "STOCK"} {
			l := g.line(r, "Locations", "WarehouseLocation", j+1)
			l.set("LocationID", loc).set("Description", loc+" area").set("Active", true)
		}
		g.warehouses = append(g.warehouses, g.ds.add(r))
	}
	for i := 1; i <= 220; i++ {
		c := itemClasses[i%len(itemClasses)]
		id := fmt.Sprintf("%s-%04d", c.prefix, 1000+i)
		r := g.top("StockItem", id, g.stamp(700-i*2))
		price := g.cents(c.lo, c.hi)
		cost := price.Mul(mustDecimal("0.62"), 2)
		status := "Active"
		switch {
		case i%37 == 0:
			status = "Inactive"
		case i%53 == 0:
			status = "No Sales"
		}
		wh := g.warehouses[i%3].String("WarehouseID")
		r.set("InventoryID", id).set("Description", fmt.Sprintf("%s %s %d", itemNouns[i%len(itemNouns)], singular(c.descr), i)).
			set("ItemClass", c.id).set("ItemStatus", status).set("ItemType", "Finished Good").set("BaseUOM", c.uom).
			set("SalesUOM", c.uom).set("PurchaseUOM", c.uom).set("DefaultPrice", price).set("MSRP", price.Mul(mustDecimal("1.15"), 2)).
			set("CurrentStdCost", Decimal(0)).set("LastStdCost", Decimal(0)).set("PendingStdCost", Decimal(0)).
			set("AverageCost", cost).set("LastCost", cost).set("MinCost", cost).set("MaxCost", cost).
			set("Markup", DecimalFromInt(0)).set("MinMarkup", DecimalFromInt(0)).
			set("DimensionWeight", DecimalFromCents(int64(50+i*13%2000))).set("DimensionVolume", DecimalFromCents(int64(10+i%300))).
			set("WeightUOM", "KG").set("VolumeUOM", "L").
			set("DefaultWarehouseID", wh).set("DefaultIssueLocationID", "STOCK").set("DefaultReceiptLocationID", "STOCK").
			set("ValuationMethod", "Average").set("LotSerialClass", "NOTTRACKED").set("PostingClass", "DEFAULT").
			set("TaxCategory", "TAXABLE").set("PackagingOption", "Manual").set("PackSeparately", false).set("IsAKit", false).
			set("SubjectToCommission", i%2 == 0).set("Visibility", "Visible").set("Availability", "Store Default").
			set("InventoryAccount", "13000").set("InventorySubaccount", "040000").set("COGSAccount", "50000").
			set("COGSSubaccount", "000000").set("SalesAccount", "40000").set("SalesSubaccount", "010000").
			set("POAccrualAccount", "20150").set("POAccrualSubaccount", "000000").set("ABCCode", []string{"A", "B", "C"}[i%3])
		if i%5 == 0 {
			r.Note = fmt.Sprintf("Reorder from the preferred vendor when stock drops below %d.", 10+i%20)
		}
		for j, w := range g.warehouses[:2] {
			l := g.line(r, "WarehouseDetails", "StockItemWarehouseDetail", j+1)
			l.set("WarehouseID", w.String("WarehouseID")).set("IsDefault", j == 0).set("Status", "Active").
				set("QtyOnHand", DecimalFromInt(int64((i*17+j*31)%400))).set("DefaultIssueLocationID", "STOCK").
				set("DefaultReceiptLocationID", "STOCK").set("InventoryAccount", "13000").set("InventorySubaccount", "040000")
		}
		g.stockItems = append(g.stockItems, g.ds.add(r))
	}
	services := [][3]string{{"CONSULTING", "Consulting services", "HOUR"}, {"INSTALL", "Installation", "HOUR"},
		{"TRAINING", "On-site training", "HOUR"}, {"FREIGHT", "Freight charge", "EA"}, {"WARRANTY", "Extended warranty", "EA"},
		{"SUPPORT", "Support contract", "MONTH"}, {"REPAIR", "Repair labour", "HOUR"}, {"DESIGN", "Design services", "HOUR"},
		{"AUDIT", "Audit services", "HOUR"}, {"HOSTING", "Hosting", "MONTH"}}
	for i := 0; i < 25; i++ {
		s := services[i%len(services)]
		id := s[0]
		if i >= len(services) {
			id = fmt.Sprintf("%s%d", s[0], i/len(services)+1)
		}
		r := g.top("NonStockItem", id, g.stamp(650-i))
		price := g.cents(40, 220)
		r.set("InventoryID", id).set("Description", s[1]).set("ItemClass", "SERVICES").set("ItemStatus", "Active").
			set("ItemType", "Service").set("BaseUnit", s[2]).set("SalesUnit", s[2]).set("PurchaseUnit", s[2]).
			set("DefaultPrice", price).set("CurrentCost", price.Mul(mustDecimal("0.5"), 2)).set("PostingClass", "DEFAULT").
			set("TaxCategory", "TAXABLE").set("RequireReceipt", false).set("RequireShipment", false).set("IsKit", false).
			set("IsAKit", false).set("SalesAccount", "40200").set("SalesSubaccount", "010000").
			set("ExpenseAccount", "65000").set("ExpenseSubaccount", "000000")
		g.nonStockItems = append(g.nonStockItems, g.ds.add(r))
	}
	for i, it := range g.stockItems[:60] {
		for j, w := range g.warehouses[:2] {
			key := it.String("InventoryID") + "/" + w.String("WarehouseID")
			r := g.top("ItemWarehouse", key, g.stamp(600-i))
			r.set("InventoryID", it.String("InventoryID")).set("WarehouseID", w.String("WarehouseID")).set("Status", "Active").
				set("DefaultIssueFrom", "STOCK").set("DefaultReceiptTo", "STOCK").set("InventoryAccount", "13000").
				set("InventorySubaccount", "040000").set("MSRP", it.Decimal("MSRP")).set("MaxQty", DecimalFromInt(int64(200+j*50))).
				set("ReorderPoint", DecimalFromInt(int64(20+i%15))).set("SafetyStock", DecimalFromInt(int64(5+i%10))).
				set("ReplenishmentSource", "Purchase").set("ReplenishmentMethod", "None").set("ServiceLevel", DecimalFromInt(95)).
				set("OverridePreferredVendor", false).set("OverrideStandardCost", false).set("OverridePrice", false)
			g.ds.add(r)
		}
	}
}

// singular turns "Computers and laptops" into "computer" for item names.
func singular(descr string) string {
	w := descr
	for i, c := range descr {
		if c == ' ' {
			w = descr[:i]
			break
		}
	}
	w = lower(w)
	if strings.HasSuffix(w, "ies") {
		return w[:len(w)-3] + "y"
	}
	if len(w) > 1 && w[len(w)-1] == 's' {
		w = w[:len(w)-1]
	}
	return w
}
