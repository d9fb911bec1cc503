package frappe

import (
	"bytes"
	"encoding/json"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/toolerr"
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
	}
}

// args decodes a call's arguments into a new value of type T.
func args[T any](call *connector.Call) (T, error) {
	var v T
	err := call.Decode(&v)
	return v, err
}

// argsSplit takes the arguments named in split out of a call's arguments
// (decoded with exact numbers) and decodes the rest into a new T.
func argsSplit[T any](call *connector.Call, split []string) (T, map[string]any, error) {
	var v T
	all := map[string]json.RawMessage{}
	if len(call.Args) > 0 {
		if err := json.Unmarshal(call.Args, &all); err != nil {
			return v, nil, toolerr.Wrap(toolerr.InvalidArgument, err, "the arguments must be a JSON object")
		}
	}
	taken := map[string]any{}
	for _, k := range split {
		raw, ok := all[k]
		if !ok {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var x any
		if err := dec.Decode(&x); err != nil {
			return v, nil, toolerr.Wrap(toolerr.InvalidArgument, err, "argument %s is not valid JSON", k)
		}
		taken[k] = x
		delete(all, k)
	}
	rest, _ := json.Marshal(all)
	sub := *call
	sub.Args = rest
	err := sub.Decode(&v)
	return v, taken, err
}
