package langhost

// Link and the nodejs InstallDependencies: what `pulumi package add ./gpu_aks_plugin` asks the consumer's host
// after generating a local SDK into the consumer's sdks/ (pkg/v3 v3.274.0 cmd/pulumi/packages/packages.go:80-165 and
// :287-349: GenSDK, then Link, then InstallDependencies of the consumer). The Python side follows Pulumi's Python
// host (pulumi/pulumi sdk/python/cmd/pulumi-language-python/main.go:1914-2030 at 1b5949891b3c), the nodejs side its
// Node.js host (sdk/nodejs/cmd/pulumi-language-nodejs/main.go:291-376, :1169-1232, :2197-2306 and :2313-2325, and
// installcache.go:79-92, same commit); the package managers and toolchains they call are sdk/v3's.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/blang/semver"
	"github.com/pulumi/pulumi/pkg/v3/codegen/cgstrings"
	nodecodegen "github.com/pulumi/pulumi/pkg/v3/codegen/nodejs"
	pycodegen "github.com/pulumi/pulumi/pkg/v3/codegen/python"
	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/fsutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/nodejs/npm"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/pulumi/pulumi/sdk/v3/python/toolchain"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Link adds each generated SDK to the consumer program's dependency files and says how to import it.
func (h *Host) Link(ctx context.Context, req *pulumirpc.LinkRequest) (*pulumirpc.LinkResponse, error) {
	client, err := schema.NewLoaderClient(req.LoaderTarget)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	loader := schema.NewCachedLoader(client)
	switch h.language {
	case "python":
		return linkPython(ctx, req, loader)
	case "nodejs":
		return linkNodejs(ctx, req, loader)
	}
	return nil, status.Errorf(codes.Unimplemented, "method Link not implemented for %s", h.language)
}

// InstallDependencies installs the program's (or plugin's) dependencies with the language's own tools.
func (h *Host) InstallDependencies(req *pulumirpc.InstallDependenciesRequest,
	server pulumirpc.LanguageRuntime_InstallDependenciesServer,
) error {
	switch h.language {
	case "python":
		return h.installPythonDependencies(req, server)
	case "nodejs":
		return installNodejsDependencies(req, server)
	}
	return status.Errorf(codes.Unimplemented, "method InstallDependencies not implemented for %s", h.language)
}

// linkedPackage binds the schema of one dependency the request names, through the engine's loader.
func linkedPackage(ctx context.Context, loader schema.ReferenceLoader, dep *pulumirpc.LinkRequest_LinkDependency,
) (schema.PackageReference, *schema.Package, error) {
	descriptor := &schema.PackageDescriptor{Name: dep.Package.Name, DownloadURL: dep.Package.Server}
	if v, err := semver.New(dep.Package.Version); err == nil {
		descriptor.Version = v
	}
	if p := dep.Package.Parameterization; p != nil {
		descriptor.Parameterization = &schema.ParameterizationDescriptor{Name: p.Name, Value: p.Value}
		if v, err := semver.New(p.Version); err == nil {
			descriptor.Parameterization.Version = *v
		}
	}
	ref, err := schema.LoadPackageReferenceV2(ctx, loader, descriptor)
	if err != nil {
		return nil, nil, err
	}
	pkg, err := ref.Definition()
	if err != nil {
		return nil, nil, err
	}
	return ref, pkg, nil
}

// linkPython writes each SDK's path into requirements.txt (or pyproject.toml for poetry and uv), replacing an
// entry of the same package, and answers `import <package> as <name>` lines. A project with a requirements.txt
// but no pyproject.toml is linked as pip even under poetry or uv: `pulumi install` has not converted it yet.
func linkPython(ctx context.Context, req *pulumirpc.LinkRequest, loader schema.ReferenceLoader,
) (*pulumirpc.LinkResponse, error) {
	opts, err := pythonOptions(req.Info, false)
	if err != nil {
		return nil, err
	}
	packages := map[string]string{}
	var imports strings.Builder
	for _, dep := range req.Packages {
		if dep.Package.Name == "pulumi" {
			packages["pulumi"] = dep.Path
			continue
		}
		ref, pkg, err := linkedPackage(ctx, loader, dep)
		if err != nil {
			return nil, err
		}
		if err := pkg.ImportLanguages(map[string]schema.Language{"python": pycodegen.Importer}); err != nil {
			return nil, err
		}
		importName, packageName := "", ""
		if info, ok := pkg.Language["python"].(pycodegen.PackageInfo); ok && info.PackageName != "" {
			importName, packageName = info.PackageName, info.PackageName
		}
		if importName == "" {
			importName = strings.ReplaceAll(ref.Name(), "-", "_")
		}
		if packageName == "" {
			packageName = pycodegen.PyPack(ref.Namespace(), ref.Name())
		}
		packages[packageName] = dep.Path
		fmt.Fprintf(&imports, "  import %s as %s\n", packageName, importName)
	}
	if opts.Toolchain != toolchain.Pip {
		if _, err := os.Stat(filepath.Join(req.Info.ProgramDirectory, "pyproject.toml")); os.IsNotExist(err) {
			if _, err := os.Stat(filepath.Join(req.Info.ProgramDirectory, "requirements.txt")); os.IsNotExist(err) {
				return nil, fmt.Errorf("no pyproject.toml or requirements.txt found in %s", req.Info.ProgramDirectory)
			}
			opts.Toolchain = toolchain.Pip
		}
	}
	tc, err := toolchain.ResolveToolchain(opts)
	if err != nil {
		return nil, err
	}
	if err := tc.LinkPackages(ctx, packages); err != nil {
		return nil, fmt.Errorf("linking packages: %w", err)
	}
	instructions := "You can import the SDK in your Python code with:\n\n"
	if len(req.Packages) > 1 {
		instructions = "You can import the SDKs in your Python code with:\n\n"
	}
	return &pulumirpc.LinkResponse{ImportInstructions: instructions + imports.String()}, nil
}

// nodejsOptions reads the runtime options the nodejs host's Link and InstallDependencies use: typescript
// (default true), tsconfig, production and packagemanager (auto|npm|yarn|pnpm|bun).
type nodejsOptions struct {
	typescript     bool
	tsconfig       string
	production     bool
	packageManager npm.PackageManagerType
}

func parseNodejsOptions(info *pulumirpc.ProgramInfo) (nodejsOptions, error) {
	options := info.Options.AsMap()
	typescript, errTypescript := option(options, "typescript", true, "typescript option must be a boolean")
	tsconfig, errTsconfig := option(options, "tsconfig", "", "tsconfigpath option must be a string")
	production, errProduction := option(options, "production", false, "production option must be a boolean")
	manager, errManager := option(options, "packagemanager", "auto", "packagemanager option must be a string")
	opts := nodejsOptions{typescript: typescript, tsconfig: tsconfig, production: production}
	if err := cmp.Or(errTypescript, errTsconfig, errProduction, errManager); err != nil {
		return opts, err
	}
	managers := map[string]npm.PackageManagerType{
		"auto": npm.AutoPackageManager, "npm": npm.NpmPackageManager, "yarn": npm.YarnPackageManager,
		"pnpm": npm.PnpmPackageManager, "bun": npm.BunPackageManager,
	}
	var known bool
	if opts.packageManager, known = managers[manager]; !known {
		return opts, fmt.Errorf("packagemanager option must be one of auto, npm, yarn, pnpm or bun, got %q", manager)
	}
	return opts, nil
}

// linkNodejs adds each SDK as a `file:` dependency through the project's package manager (npm: `npm pkg set`, and
// the SDK's install script allowed), and answers import lines in the project's module syntax.
func linkNodejs(ctx context.Context, req *pulumirpc.LinkRequest, loader schema.ReferenceLoader,
) (*pulumirpc.LinkResponse, error) {
	opts, err := parseNodejsOptions(req.Info)
	if err != nil {
		return nil, err
	}
	pm, err := npm.ResolvePackageManager(opts.packageManager, req.Info.ProgramDirectory)
	if err != nil {
		return nil, err
	}
	typescript := opts.typescript || opts.tsconfig != ""
	if !typescript {
		if _, err := fsutil.Searchup(req.Info.ProgramDirectory, "tsconfig.json"); err == nil {
			typescript = true
		}
	}
	modules := typescript
	if !modules {
		if manifest, err := npm.SearchupPackageManifest(req.Info.ProgramDirectory); err == nil {
			if data, _, err := npm.ReadPackageManifest(filepath.Dir(manifest)); err == nil {
				modules = data["type"] == "module"
			}
		}
	}
	instructions := "You can import the SDK in your JavaScript code with:\n\n"
	if typescript {
		instructions = "You can import the SDK in your TypeScript code with:\n\n"
	}
	var imports strings.Builder
	for _, dep := range req.Packages {
		ref, pkg, err := linkedPackage(ctx, loader, dep)
		if err != nil {
			return nil, err
		}
		if err := pkg.ImportLanguages(map[string]schema.Language{"nodejs": nodecodegen.Importer}); err != nil {
			return nil, err
		}
		packageName := "@pulumi/" + pkg.Name
		if pkg.Namespace != "" {
			packageName = "@" + pkg.Namespace + "/" + pkg.Name
		}
		if info, ok := pkg.Language["nodejs"].(nodecodegen.NodePackageInfo); ok && info.PackageName != "" {
			packageName = info.PackageName
		}
		if err := pm.Link(ctx, req.Info.ProgramDirectory, packageName, dep.Path); err != nil {
			return nil, err
		}
		name := cgstrings.Camel(ref.Name())
		if modules {
			fmt.Fprintf(&imports, "  import * as %s from \"%s\";\n", name, packageName)
		} else {
			fmt.Fprintf(&imports, "  const %s = require(\"%s\");\n", name, packageName)
		}
	}
	return &pulumirpc.LinkResponse{ImportInstructions: instructions + imports.String()}, nil
}

// installNodejsDependencies runs the package manager's install at the npm or yarn workspace root, or the
// program's folder (no shared install cache, no node version from .nvmrc: testbed/README.md).
func installNodejsDependencies(req *pulumirpc.InstallDependenciesRequest,
	server pulumirpc.LanguageRuntime_InstallDependenciesServer,
) error {
	closer, stdout, stderr, err := rpcutil.MakeInstallDependenciesStreams(server, req.IsTerminal)
	if err != nil {
		return err
	}
	defer closer.Close()
	fmt.Fprint(stdout, "Installing dependencies...\n\n")
	root := req.Info.ProgramDirectory
	if workspace, err := npm.FindWorkspaceRoot(root); err == nil {
		fmt.Fprintf(stdout, "Detected workspace root at %s\n", workspace)
		root = workspace
	} else if !errors.Is(err, npm.ErrNotInWorkspace) {
		return fmt.Errorf("failure while trying to find workspace root: %w", err)
	}
	opts, err := parseNodejsOptions(req.Info)
	if err != nil {
		return fmt.Errorf("failed to parse options: %w", err)
	}
	if _, err := npm.Install(server.Context(), opts.packageManager, root, opts.production, stdout, stderr); err != nil {
		return err
	}
	fmt.Fprint(stdout, "Finished installing dependencies\n\n")
	return closer.Close()
}
