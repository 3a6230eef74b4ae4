// pulumi-language-python runs Python programs, policy packs and plugins, and generates Python SDKs.
package main

import (
	codegen "github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"

	"gpu-aks.local/engines/pulumi/langhost"
)

func main() {
	langhost.Main("python", func(pkg *schema.Package, req *pulumirpc.GeneratePackageRequest,
		loader schema.ReferenceLoader,
	) (map[string][]byte, error) {
		return codegen.GeneratePackage("pulumi-language-python", pkg, req.ExtraFiles, loader)
	}, true)
}
