package acumatica

import (
	"fmt"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector/connectortest"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// In $metadata, many entity sets may name one entity type: each inquiry
// got the type's columns, and the model written to the cache repeated
// them per inquiry, so 2,000 sets of a type of 2,000 columns (a 130 KiB
// document) made 100 MB of model; within the response bound, terabytes.
// The model is bounded, and past the bound the call fails before it
// writes anything.
func TestGIMetadataBoundsTheModel(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?><edmx:Edmx Version="4.0" xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx"><edmx:DataServices>`)
	b.WriteString(`<Schema Namespace="PX.Objects" xmlns="http://docs.oasis-open.org/odata/ns/edm"><EntityType Name="Wide">`)
	for i := range 2000 {
		fmt.Fprintf(&b, `<Property Name="C%d" Type="Edm.String"/>`, i)
	}
	b.WriteString(`</EntityType><EntityContainer Name="Default">`)
	for i := range 2000 {
		fmt.Fprintf(&b, `<EntitySet Name="S%d" EntityType="PX.Objects.Wide"/>`, i)
	}
	b.WriteString(`</EntityContainer></Schema></edmx:DataServices></edmx:Edmx>`)
	doc := b.String()
	h.answerAt("/$metadata", "application/xml", doc)
	var err error
	alloc := connectortest.Allocated(func() {
		_, err = h.run(kindFull, "acumatica_describe_inquiry", map[string]any{"name": "S1"})
	})
	if err == nil {
		t.Errorf("an inquiry was described from a model of %d KiB of metadata", len(doc)>>10)
	} else {
		wantCode(t, err, toolerr.UpstreamInvalidResponse, "wide metadata")
	}
	if alloc > 64<<20 {
		t.Errorf("the call allocated %d MiB for %d KiB of metadata", alloc>>20, len(doc)>>10)
	}
}
