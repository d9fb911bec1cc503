package acumaticatest

import (
	"html"
	"strings"
)

// giMetadata renders the EDMX 4.0 document: one EntityType per inquiry
// (keys are the source tables' key fields), an EntitySet per inquiry,
// and for inquiries with parameters a Function plus a FunctionImport
// "<TypeName>_WithParameters".
func (s *Simulator) giMetadata() string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n")
	b.WriteString(`<edmx:Edmx Version="4.0" xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx">`)
	b.WriteString(`<edmx:DataServices><Schema Namespace="GenericInquiry" xmlns="http://docs.oasis-open.org/odata/ns/edm">`)
	for _, q := range s.data.inquiries {
		b.WriteString(`<EntityType Name="` + attr(q.TypeName()) + `"><Key>`)
		for _, c := range q.Columns {
			if c.Key {
				b.WriteString(`<PropertyRef Name="` + attr(c.Name) + `"/>`)
			}
		}
		b.WriteString(`</Key>`)
		for _, c := range q.Columns {
			b.WriteString(`<Property Name="` + attr(c.Name) + `" Type="` + c.Type + `"`)
			if c.Key {
				b.WriteString(` Nullable="false"`)
			}
			b.WriteString(`/>`)
		}
		b.WriteString(`</EntityType>`)
	}
	for _, q := range s.data.inquiries {
		if len(q.Parameters) == 0 {
			continue
		}
		b.WriteString(`<Function Name="` + attr(q.Name) + `">`)
		for _, p := range q.Parameters {
			b.WriteString(`<Parameter Name="` + attr(p.Name) + `" Type="` + p.Type + `"/>`)
		}
		b.WriteString(`<ReturnType Type="Collection(GenericInquiry.` + attr(q.TypeName()) + `)" Nullable="false"/></Function>`)
	}
	b.WriteString(`<EntityContainer Name="Default">`)
	for _, q := range s.data.inquiries {
		b.WriteString(`<EntitySet Name="` + attr(q.Name) + `" EntityType="GenericInquiry.` + attr(q.TypeName()) + `"/>`)
	}
	for _, q := range s.data.inquiries {
		if len(q.Parameters) > 0 {
			b.WriteString(`<FunctionImport Name="` + attr(q.TypeName()) + `_WithParameters" Function="GenericInquiry.` +
				attr(q.Name) + `" EntitySet="` + attr(q.Name) + `"/>`)
		}
	}
	b.WriteString(`</EntityContainer></Schema></edmx:DataServices></edmx:Edmx>`)
	return b.String()
}

func attr(s string) string { return html.EscapeString(s) }
