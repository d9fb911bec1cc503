package frappe

import (
	"bytes"
	"encoding/json"

	"github.com/erpgate/erpgate/platform/connector"
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
// (decoded with exact numbers) and decodes the rest into a new T. A name
// given twice counts once, the last, as decoding keeps it.
func argsSplit[T any](call *connector.Call, split []string) (T, map[string]any, error) {
	var v T
	taken := map[string]any{}
	if len(call.Args) == 0 {
		return v, taken, nil
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(call.Args, &all); err != nil {
		return v, nil, toolerr.Wrap(toolerr.InvalidArgument, err, "the arguments must be a JSON object (%v)", err)
	}
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
	if len(taken) == 0 {
		return v, taken, call.Decode(&v)
	}
	rest, err := json.Marshal(all)
	if err != nil {
		return v, nil, toolerr.Wrap(toolerr.InvalidArgument, err, "the arguments could not be read")
	}
	sub := *call
	sub.Args = rest
	return v, taken, sub.Decode(&v)
}
