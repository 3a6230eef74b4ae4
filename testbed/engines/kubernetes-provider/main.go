// Command pulumi-resource-kubernetes is the real pulumi-kubernetes provider, built from its Go module.
//
// It does what the provider's own main does (pulumi/pulumi-kubernetes
// provider/cmd/pulumi-resource-kubernetes/main.go at f47bc2d6: provider.Serve with the schema stamped
// with the version), except that its generate.go step, which writes schema-embed.json and is not in
// the module, is done here at start-up: prepare.sh copies schema.json and terraform-mapping.json out
// of the module cache beside this file.
package main

import (
	_ "embed"
	"encoding/json"
	"log"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

// The revision the module proxy serves (see go.mod): after the 4.24.0 release, before the next one.
const providerVersion = "4.24.1-dev.20260114+f47bc2d6"

//go:embed schema.json
var schemaJSON []byte

//go:embed terraform-mapping.json
var terraformMapping []byte

func main() {
	// generate.go unmarshals into schema.PackageSpec and sets Version; a raw map keeps every other
	// key byte for byte.
	var spec map[string]json.RawMessage
	if err := json.Unmarshal(schemaJSON, &spec); err != nil {
		log.Fatalf("cannot deserialize schema: %v", err)
	}
	stamped, _ := json.Marshal(providerVersion)
	spec["version"] = stamped
	schema, err := json.Marshal(spec)
	if err != nil {
		log.Fatalf("cannot reserialize schema: %v", err)
	}
	version.Version = providerVersion
	provider.Serve("kubernetes", version.Version, schema, terraformMapping)
}
