package frappe

import (
	"github.com/erpgate/erpgate/platform/connector"
)

// catalogue lists every tool. Each tool is declared in the file of its area.
func catalogue() []connector.Tool {
	return []connector.Tool{
		getCurrentUserTool(),
		listCompaniesTool(),
		listCustomersTool(),
		listSalesInvoicesTool(),
		getDocumentTool(),
	}
}

// args decodes a call's arguments into a new value of type T.
func args[T any](call *connector.Call) (T, error) {
	var v T
	err := call.Decode(&v)
	return v, err
}
