package acumatica

import (
	"github.com/erpgate/erpgate/platform/connector"
)

// catalogue lists every tool: the per-entity getters (declared as data in
// getters.go), then the discovery, inquiry, schema-knowledge and
// ChatGPT-compatible tools, and the write tools (writes.go), each declared
// in the file of its area.
func catalogue(conn *Connector) []connector.Tool {
	var tools []connector.Tool
	for _, g := range getterSpecs {
		tools = append(tools, getterTool(conn, g))
	}
	return append(tools,
		listEntitiesTool(conn),
		listCustomersTool(conn),
		describeEntityTool(conn),
		listInquiriesTool(conn),
		describeInquiryTool(conn),
		runInquiryTool(conn),
		clearCacheTool(),
		searchSchemaTool(conn),
		getSchemaEntityTool(conn),
		listSchemaEntitiesTool(conn),
		explainGIXMLTool(),
		searchTool(conn),
		fetchTool(conn),
		createSalesOrderTool(conn),
		updateCustomerTool(conn),
		addNoteTool(conn),
	)
}

// args decodes a call's arguments into a new value of type T.
func args[T any](call *connector.Call) (T, error) {
	var v T
	err := call.Decode(&v)
	return v, err
}
