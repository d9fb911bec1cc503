package connector

// Hints are the MCP tool annotations the engine advertises for a tool. They
// follow from its Effect, Idempotent, Overwrites and Local alone, so a connector never
// states them and cannot contradict itself.
type Hints struct {
	// ReadOnly: the tool changes nothing (readOnlyHint).
	ReadOnly bool
	// Destructive: it may change or remove what the ERP holds, not only
	// add to it (destructiveHint, as MCP defines it): a Destructive tool,
	// or a Write tool that Overwrites.
	Destructive bool
	// Idempotent: repeating a call with the same arguments has no further
	// effect (idempotentHint). Reads always are, destructive tools never.
	Idempotent bool
	// OpenWorld: the tool reaches a system outside erpgate, the ERP
	// (openWorldHint). Every tool does but a Local one.
	OpenWorld bool
}

// Hints returns the annotations the engine advertises for t.
func (t Tool) Hints() Hints {
	return Hints{
		ReadOnly:    t.Effect == Read,
		Destructive: t.Effect == Destructive || (t.Effect == Write && t.Overwrites),
		Idempotent:  t.Effect == Read || (t.Effect == Write && t.Idempotent),
		OpenWorld:   !t.Local,
	}
}
