package frappe

import (
	"bytes"
	"encoding/json"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/rawjson"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// catalogue lists every tool. Each tool is declared in the file of its area.
func catalogue() []connector.Tool {
	return []connector.Tool{
		// Connection and master data.
		getCurrentUserTool(),
		listCompaniesTool(),
		listCustomersTool(),
		listSuppliersTool(),
		listItemsTool(),
		listWarehousesTool(),
		listAccountsTool(),
		listCostCentresTool(),
		listProjectsTool(),
		listFiscalYearsTool(),
		// Transactions.
		listSalesOrdersTool(),
		listSalesInvoicesTool(),
		listPurchaseOrdersTool(),
		listPurchaseInvoicesTool(),
		listPaymentsTool(),
		listBankTransactionsTool(),
		getDocumentTool(),
		// Reports.
		getStockBalanceTool(),
		getStockLedgerTool(),
		getProfitAndLossTool(),
		getTrialBalanceTool(),
		getGeneralLedgerTool(),
		getAccountsReceivableTool(),
		getAccountsPayableTool(),
		getBankReconciliationStatementTool(),
		// Summaries.
		getAccountsReceivableSummaryTool(),
		getAccountsPayableSummaryTool(),
		getPartyBalanceTool(),
		getSalesSummaryTool(),
		getStockRiskTool(),
		// ChatGPT-compatible search and fetch.
		searchTool(),
		fetchTool(),
		// Writes: each runs only after a person approved its preview.
		createSalesOrderTool(),
		updateCustomerTool(),
		addCommentTool(),
		submitDocumentTool(),
	}
}

// args decodes a call's arguments into a new value of type T.
func args[T any](call *connector.Call) (T, error) {
	var v T
	err := call.Decode(&v)
	return v, err
}

// argsSplit takes the arguments named in split out of a call's arguments
// (decoded with exact numbers) and decodes the rest into a new T. The
// arguments are split on their JSON text (rawjson), so a call that uses
// none of the split arguments, the common case, is decoded once.
func argsSplit[T any](call *connector.Call, split []string) (T, map[string]any, error) {
	var v T
	taken := map[string]any{}
	if len(call.Args) == 0 {
		return v, taken, nil
	}
	splitName := func(f rawjson.Field) (string, bool) {
		for _, k := range split {
			if f.Is(k) {
				return k, true
			}
		}
		return "", false
	}
	found := false
	if err := rawjson.EachMember(call.Args, func(f rawjson.Field) {
		_, ok := splitName(f)
		found = found || ok
	}); err != nil {
		return v, nil, toolerr.Wrap(toolerr.InvalidArgument, err, "the arguments must be a JSON object (%v)", err)
	}
	if !found {
		err := call.Decode(&v)
		return v, taken, err
	}
	rest := append(make([]byte, 0, len(call.Args)), '{')
	var failed error
	_ = rawjson.EachMember(call.Args, func(f rawjson.Field) {
		k, ok := splitName(f)
		if !ok {
			if len(rest) > 1 {
				rest = append(rest, ',')
			}
			rest = append(append(append(rest, f.Name...), ':'), f.Value...)
			return
		}
		dec := json.NewDecoder(bytes.NewReader(f.Value))
		dec.UseNumber()
		var x any
		if err := dec.Decode(&x); err != nil && failed == nil {
			failed = toolerr.Wrap(toolerr.InvalidArgument, err, "argument %s is not valid JSON", k)
		}
		taken[k] = x // the last, when a name repeats, as decoding keeps it
	})
	if failed != nil {
		return v, nil, failed
	}
	sub := *call
	sub.Args = append(rest, '}')
	err := sub.Decode(&v)
	return v, taken, err
}
