// Package langhost is the language host gpu-aks builds beside the Pulumi CLI.
//
// Pulumi's own hosts (github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3 and the nodejs and
// go ones) are modules of their own that Pulumi does not tag, so the Go module proxy does not serve them
// (proxy.golang.org answers 403 "This module version is not available" for their version list). Everything
// such a host calls is in modules the proxy does serve at the CLI's version, and this package calls the
// same pieces: sdk/v3's python/toolchain (virtualenv, pip), rpcutil's plugin streams, sdk/v3's PolicyProxy
// (how a Python policy pack gets its stack config), and pkg/v3's codegen for SDK generation. What it does
// follows the Python host's main.go (pulumi/pulumi sdk/python/cmd/pulumi-language-python/main.go at
// 1b5949891b3cefcb9974752b24a5ecef0acc86c8): the RPCs that program runs, policy packs, source-based
// plugins and `pulumi package gen-sdk` reach. The rest answer Unimplemented, as an older host would.
package langhost

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/pulumi/pulumi/pkg/v3/codegen/schema"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/cmdutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/logging"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/version"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
)

// Codegen turns a bound package into the files of its SDK (one of pkg/v3's codegen/<language> packages).
type Codegen func(pkg *schema.Package, req *pulumirpc.GeneratePackageRequest, loader schema.ReferenceLoader,
) (map[string][]byte, error)

// Host is a LanguageRuntime server: every language generates SDKs; Python also runs programs and plugins.
type Host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer

	language      string
	codegen       Codegen
	engineAddress string
	exec          string // the Python exec shim, next to the host (Python only)
}

// Main serves the host the way the CLI starts every plugin: it prints the port, then serves until told to stop.
func Main(language string, codegen Codegen, python bool) {
	showVersion := flag.Bool("version", false, "print the plugin version and exit")
	flag.String("tracing", "", "ignored: tracing is not collected")
	// Engines before pulumi 3.2xx passed the runtime options and the root as flags
	// (sdk/go/common/resource/plugin/langruntime_plugin.go buildArgsForNewPlugin at v3.206.0); pulumi-yaml
	// v1.25.0, the YAML host the proxy serves, embeds that engine to load plugins. The options also arrive in
	// every request's ProgramInfo, which is what is read.
	for _, name := range []string{"root", "virtualenv", "toolchain", "typechecker", "use-executor"} {
		flag.String(name, "", "ignored: read from the request's ProgramInfo")
	}
	flag.Parse()
	if *showVersion {
		fmt.Println(version.Version)
		return
	}
	logging.InitLogging(false, 0, false)
	host := &Host{language: language, codegen: codegen}
	if args := flag.Args(); len(args) > 0 {
		host.engineAddress = args[0]
	}
	if python {
		self, err := os.Executable()
		if err != nil {
			cmdutil.Exit(fmt.Errorf("could not determine the host's own path: %w", err))
		}
		// As Pulumi's host: the exec shim is installed next to the host, not looked up on PATH.
		host.exec = filepath.Join(filepath.Dir(self), "pulumi-language-python-exec")
		if _, err := os.Stat(host.exec); err != nil {
			cmdutil.Exit(fmt.Errorf("missing executor %s: %w", host.exec, err))
		}
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	stop := make(chan bool)
	go func() { <-ctx.Done(); cancel(); close(stop) }()
	if host.engineAddress != "" {
		if err := rpcutil.Healthcheck(ctx, host.engineAddress, 5*time.Minute, cancel); err != nil {
			cmdutil.Exit(fmt.Errorf("could not start the engine health check: %w", err))
		}
	}
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Cancel: stop,
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, host)
			return nil
		},
	})
	if err != nil {
		cmdutil.Exit(fmt.Errorf("could not start the language host: %w", err))
	}
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		cmdutil.Exit(fmt.Errorf("language host stopped serving: %w", err))
	}
}

func (h *Host) Handshake(ctx context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	h.engineAddress = req.EngineAddress
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *Host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version.Version}, nil
}

// GeneratePackage binds the schema with the engine's loader and writes what the language's codegen returns,
// as every Pulumi host does.
func (h *Host) GeneratePackage(ctx context.Context, req *pulumirpc.GeneratePackageRequest,
) (*pulumirpc.GeneratePackageResponse, error) {
	client, err := schema.NewLoaderClient(req.LoaderTarget)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	var spec schema.PackageSpec
	if err := json.Unmarshal([]byte(req.Schema), &spec); err != nil {
		return nil, err
	}
	loader := schema.NewCachedLoader(client)
	pkg, diags, err := schema.BindSpec(spec, loader, schema.ValidationOptions{AllowDanglingReferences: true})
	if err != nil {
		return nil, err
	}
	response := &pulumirpc.GeneratePackageResponse{Diagnostics: plugin.HclDiagnosticsToRPCDiagnostics(diags)}
	if diags.HasErrors() {
		return response, nil
	}
	files, err := h.codegen(pkg, req, loader)
	if err != nil {
		return nil, err
	}
	for name, data := range files {
		path := filepath.Join(req.Directory, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, err
		}
	}
	return response, nil
}
