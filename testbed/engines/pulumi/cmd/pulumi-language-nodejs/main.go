// pulumi-language-nodejs generates TypeScript SDKs (`pulumi package gen-sdk --language nodejs`); it does not
// run Node.js programs.
package main

import (
	codegen "github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"

	"gpu-aks.local/engines/pulumi/langhost"
)

func main() {
	langhost.Main("nodejs", func(pkg *schema.Package, req *pulumirpc.GeneratePackageRequest,
		loader schema.ReferenceLoader,
	) (map[string][]byte, error) {
		return codegen.GeneratePackage("pulumi-language-nodejs", pkg, req.ExtraFiles, req.LocalDependencies,
			req.Local, loader)
	}, false)
}
