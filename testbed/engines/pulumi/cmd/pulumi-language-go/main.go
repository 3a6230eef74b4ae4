// pulumi-language-go generates Go SDKs (`pulumi package gen-sdk --language go`); it does not run Go programs.
package main

import (
	"errors"

	codegen "github.com/pulumi/pulumi/pkg/v3/codegen/go"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"

	"gpu-aks.local/engines/pulumi/langhost"
)

func main() {
	langhost.Main("go", func(pkg *schema.Package, req *pulumirpc.GeneratePackageRequest,
		_ schema.ReferenceLoader,
	) (map[string][]byte, error) {
		if len(req.ExtraFiles) > 0 {
			return nil, errors.New("overlays are not supported for Go") // as Pulumi's Go host says
		}
		return codegen.GeneratePackage("pulumi-language-go", pkg, req.LocalDependencies)
	}, false)
}
