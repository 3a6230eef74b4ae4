package langhost

// The Python RPCs. Each follows Pulumi's host, pulumi/pulumi sdk/python/cmd/pulumi-language-python/main.go at
// 1b5949891b3c (cited as main.go:LINE), with the toolchain the CLI's own sdk/v3 v3.274.0 ships
// (python/toolchain); testbed/README.md lists what is left out and why.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/blang/semver"
	sdk "github.com/pulumi/pulumi/sdk/v3"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/pulumi/pulumi/sdk/v3/python/toolchain"
)

// userActionableExit is the exit code the exec shim uses after it has shown the user the error itself
// (pulumi-language-python-exec, PYTHON_PROCESS_EXITED_AFTER_SHOWING_USER_ACTIONABLE_MESSAGE_CODE).
const userActionableExit = 32

// minimumPython is the oldest Python Pulumi's host accepts without a warning (main.go:105-111).
var minimumPython = semver.MustParse("3.7.0")

// pythonOptions reads Pulumi.yaml's runtime options as Pulumi's host does (parseOptions, main.go:233-291):
// virtualenv, typechecker mypy|pyright, toolchain pip|poetry|uv; a plugin (not a policy pack) with no virtualenv
// gets `venv`.
func pythonOptions(info *pulumirpc.ProgramInfo, isPlugin bool) (toolchain.PythonOptions, error) {
	opts := toolchain.PythonOptions{Root: info.RootDirectory, ProgramDir: info.ProgramDirectory}
	options := info.Options.AsMap()
	virtualenv, errVirtualenv := option(options, "virtualenv", "", "virtualenv option must be a string")
	typechecker, errTypechecker := option(options, "typechecker", "", "typechecker option must be a string")
	chain, errToolchain := option(options, "toolchain", "", "toolchain option must be a string")
	if err := cmp.Or(errVirtualenv, errTypechecker, errToolchain); err != nil {
		return opts, err
	}
	opts.Virtualenv = virtualenv
	switch typechecker {
	case "":
	case "mypy":
		opts.Typechecker = toolchain.TypeCheckerMypy
	case "pyright":
		opts.Typechecker = toolchain.TypeCheckerPyright
	default:
		return opts, fmt.Errorf("unsupported typechecker option: %s", typechecker)
	}
	switch chain {
	case "":
	case "pip":
		opts.Toolchain = toolchain.Pip
	case "poetry":
		opts.Toolchain = toolchain.Poetry
	case "uv":
		opts.Toolchain = toolchain.Uv
	default:
		return opts, fmt.Errorf("unsupported toolchain option: %s", chain)
	}
	if isPlugin && (opts.Toolchain == toolchain.Pip || opts.Toolchain == toolchain.Auto) && opts.Virtualenv == "" {
		opts.Virtualenv = "venv"
	}
	return opts, nil
}

// option is one runtime option of Pulumi.yaml, `fallback` when it is absent, refused with Pulumi's message when it
// has another type.
func option[T any](options map[string]any, name string, fallback T, message string) (T, error) {
	value, ok := options[name]
	if !ok {
		return fallback, nil
	}
	typed, ok := value.(T)
	if !ok {
		return fallback, errors.New(message)
	}
	return typed, nil
}

func (h *Host) pythonToolchain(info *pulumirpc.ProgramInfo, isPlugin bool,
) (toolchain.Toolchain, toolchain.PythonOptions, error) {
	if h.exec == "" {
		return nil, toolchain.PythonOptions{}, fmt.Errorf("the %s host here only generates SDKs", h.language)
	}
	opts, err := pythonOptions(info, isPlugin)
	if err != nil {
		return nil, opts, err
	}
	tc, err := toolchain.ResolveToolchain(opts)
	return tc, opts, err
}

// Run type-checks the program when the typechecker option asks for it, then starts the exec shim with the
// program, its config in PULUMI_CONFIG and the secret keys in PULUMI_CONFIG_SECRET_KEYS (main.go:997-1205).
func (h *Host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	tc, opts, err := h.pythonToolchain(req.Info, false)
	if err != nil {
		return nil, err
	}
	if err := tc.ValidateVenv(ctx); err != nil {
		return nil, err
	}
	args := []string{h.exec}
	flag := func(name, value string) {
		if value != "" {
			args = append(args, "--"+name, value)
		}
	}
	flag("monitor", req.GetMonitorAddress())
	flag("engine", h.engineAddress)
	flag("project", req.GetProject())
	flag("root_directory", req.GetInfo().GetRootDirectory())
	flag("stack", req.GetStack())
	flag("pwd", req.GetPwd())
	flag("dry_run", strconv.FormatBool(req.GetDryRun()))
	flag("parallel", strconv.Itoa(int(req.GetParallel())))
	flag("organization", req.GetOrganization())
	args = append(append(args, req.Info.EntryPoint), req.GetArgs()...)

	cmd, err := tc.Command(ctx, args...)
	if err != nil {
		return nil, err
	}
	cmd.Cancel = func() error {
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			return cmd.Process.Kill()
		}
		return nil
	}
	cmd.WaitDelay = 5 * time.Second
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	if req.GetConfig() != nil {
		config, err := json.Marshal(req.GetConfig())
		if err != nil {
			return nil, fmt.Errorf("failed to serialize configuration: %w", err)
		}
		env = append(env, "PULUMI_CONFIG="+string(config))
	}
	secretKeys := req.GetConfigSecretKeys()
	if secretKeys == nil {
		secretKeys = []string{}
	}
	keys, err := json.Marshal(secretKeys)
	if err != nil {
		return nil, fmt.Errorf("failed to serialize configuration secret keys: %w", err)
	}
	cmd.Env = append(env, "PULUMI_CONFIG_SECRET_KEYS="+string(keys))

	if err := typecheck(ctx, tc, opts, req.Info.ProgramDirectory); err != nil {
		return nil, err
	}
	if err := cmd.Run(); err != nil {
		_ = os.Stdout.Sync()
		_ = os.Stderr.Sync()
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			status, ok := exitErr.Sys().(syscall.WaitStatus)
			switch {
			case !ok:
				err = fmt.Errorf("program exited unexpectedly: %w", exitErr)
			case status.ExitStatus() == userActionableExit:
				return &pulumirpc.RunResponse{Bail: true}, nil
			case status.ExitStatus() == 0:
				err = fmt.Errorf("program exited unexpectedly: %w", exitErr)
			default:
				err = fmt.Errorf("program exited with non-zero exit code: %d", status.ExitStatus())
			}
		} else {
			err = fmt.Errorf("problem executing program (could not run language executor): %w", err)
		}
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	return &pulumirpc.RunResponse{}, nil
}

// typecheck runs `python -m mypy|pyright PROGRAM_DIR` in the program's folder when the typechecker option is set,
// after checking the checker is installed; its failure fails the run with its output (main.go:1107-1145,
// checkForPackage :969-995). mypy is told to skip the virtualenv.
func typecheck(ctx context.Context, tc toolchain.Toolchain, opts toolchain.PythonOptions, programDir string) error {
	if opts.Typechecker == toolchain.TypeCheckerNone {
		return nil
	}
	name := strings.ToLower(toolchain.TypeCheckerName(opts.Typechecker)) // "mypy" or "pyright"
	args := []string{"-m", name}
	if name == "mypy" {
		venv, err := tc.VirtualEnvPath(ctx)
		if err != nil {
			return err
		}
		relative, err := filepath.Rel(programDir, venv)
		if err != nil {
			return err
		}
		args = append(args, "--exclude", relative)
	}
	cmd, err := tc.Command(ctx, append(args, programDir)...)
	if err != nil {
		return err
	}
	installed, err := tc.ListPackages(ctx, true)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(installed, func(p plugin.DependencyInfo) bool { return p.Name == name }) {
		hint := fmt.Sprintf("Please install it using `poetry add %s`.", name)
		if opts.Toolchain != toolchain.Poetry {
			hint = fmt.Sprintf("Please add an entry for %s to requirements.txt and run `%s/bin/pip install -r "+
				"requirements.txt`", name, opts.Virtualenv)
		}
		return fmt.Errorf("The typechecker option is set to %s, but %s is not installed. %s", name, name, hint) //nolint:staticcheck,revive // Pulumi's wording
	}
	var output bytes.Buffer
	cmd.Stdout = io.MultiWriter(os.Stdout, &output)
	cmd.Stderr = io.MultiWriter(os.Stderr, &output)
	cmd.Dir = programDir
	if err := cmd.Run(); err != nil {
		if output.Len() > 0 {
			return fmt.Errorf("%s failed: %w\n%s", name, err, output.String())
		}
		return fmt.Errorf("%s failed: %w", name, err)
	}
	return nil
}

// RunPlugin runs a plugin or a policy pack as Pulumi's host does (main.go:1528-1728). A folder with a __main__.py,
// or an interpreter whose pulumi has no `pulumi.run.plugin`, runs the folder: a policy pack as
// `python -u -m pulumi.policy ENGINE PACK_DIR` in the pack's folder, with the stack's config it learns through sdk's
// PolicyProxy, any other plugin as `python PLUGIN_DIR ARGS` in the consumer's folder. A folder without __main__.py is
// a buildable pyproject.toml package run as `python -m pulumi.run.plugin NAME ARGS`, a policy pack included.
func (h *Host) RunPlugin(req *pulumirpc.RunPluginRequest, server pulumirpc.LanguageRuntime_RunPluginServer) error {
	ctx := server.Context()
	analyzer := req.Kind == string(apitype.AnalyzerPlugin)
	tc, opts, err := h.pythonToolchain(req.Info, !analyzer)
	if err != nil {
		return err
	}
	hasMain := true
	if _, err := os.Stat(filepath.Join(opts.Root, "__main__.py")); err != nil {
		if !os.IsNotExist(err) {
			return fmt.Errorf("looking for __main__.py: %w", err)
		}
		hasMain = false
	}
	// An old pulumi in the plugin's virtualenv has no pulumi.run.plugin: the folder is then run as it is.
	hasRunPlugin := true
	check, err := tc.Command(ctx, "-c", "import pulumi.run.plugin")
	if err != nil {
		return err
	}
	if out, err := check.CombinedOutput(); err != nil && strings.Contains(string(out), "ModuleNotFoundError") {
		hasRunPlugin = false
	}
	var cmd *exec.Cmd
	switch {
	case hasRunPlugin && !hasMain:
		buildable, err := toolchain.IsBuildablePackage(opts.Root)
		if err != nil {
			return fmt.Errorf("checking if plugin is a buildable package: %w", err)
		}
		if !buildable {
			return errors.New("plugin is not runnable, it provides neither __main__.py nor a buildable pyproject.toml")
		}
		pyproject, err := toolchain.LoadPyproject(opts.Root)
		if err != nil {
			return fmt.Errorf("loading pyproject: %w", err)
		}
		cmd, err = tc.ModuleCommand(ctx, "pulumi.run.plugin", append([]string{pyproject.Project.Name}, req.Args...)...)
		if err != nil {
			return err
		}
	case analyzer:
		args := append([]string{"-u", "-m", "pulumi.policy"}, req.Args...)
		if cmd, err = tc.Command(ctx, append(args, req.Info.ProgramDirectory)...); err != nil {
			return err
		}
	default:
		if cmd, err = tc.Command(ctx, append([]string{req.Info.ProgramDirectory}, req.Args...)...); err != nil {
			return err
		}
	}
	closer, stdout, stderr, err := rpcutil.MakeRunPluginStreams(server, false)
	if err != nil {
		return err
	}
	defer closer.Close()
	var proxy *sdk.PolicyProxy
	if analyzer {
		cmd.Dir = req.Info.ProgramDirectory
		if proxy, stdout, err = sdk.NewPolicyProxy(ctx, stdout); err != nil {
			return fmt.Errorf("could not start policy pack proxy: %w", err)
		}
		config, err := proxy.AwaitConfiguration(ctx)
		if err != nil {
			return fmt.Errorf("could not get stack configuration: %w", err)
		}
		if config != nil {
			add := func(k, v string) {
				if v != "" {
					cmd.Env = append(cmd.Env, k+"="+v)
				}
			}
			add("PULUMI_ORGANIZATION", config.Organization)
			add("PULUMI_PROJECT", config.Project)
			add("PULUMI_STACK", config.Stack)
			add("PULUMI_DRY_RUN", strconv.FormatBool(config.DryRun))
			if config.Config != nil {
				data, err := json.Marshal(config.Config)
				if err != nil {
					return fmt.Errorf("could not marshal stack configuration: %w", err)
				}
				add("PULUMI_CONFIG", string(data))
			}
		}
	} else {
		cmd.Dir = req.Pwd
	}
	// As main.go:1679: the toolchain's environment (the virtualenv activated over the host's) plus the request's.
	cmd.Env = append(cmd.Env, req.Env...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		err = fmt.Errorf("problem executing plugin program (could not run language executor): %w", err)
		if proxy != nil {
			// Differs from Pulumi's host, which returns here while the engine waits on the proxy for a pack that
			// never comes: the proxy is told, so the engine reports the error (testbed/README.md).
			proxy.Abort(err)
		}
		return err
	}
	if proxy != nil {
		if err := proxy.Attach(ctx, cmd); err != nil {
			return fmt.Errorf("could not attach policy pack proxy: %w", err)
		}
		return nil
	}
	if err := cmd.Wait(); err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			if status, ok := exitErr.Sys().(syscall.WaitStatus); ok {
				return server.Send(&pulumirpc.RunPluginResponse{
					Output: &pulumirpc.RunPluginResponse_Exitcode{Exitcode: int32(status.ExitStatus())},
				})
			}
			return fmt.Errorf("program exited unexpectedly: %w", exitErr)
		}
		return fmt.Errorf("problem executing plugin program (could not run language executor): %w", err)
	}
	return closer.Close()
}

// GetRequiredPackages creates the virtualenv and installs requirements.txt when the virtualenv is missing
// (EnsureVenv; what lets `pulumi up` of a new project install it), warns about an unsupported Python, and lists the
// provider each installed Pulumi SDK asks for at its version (main.go:326-368).
func (h *Host) GetRequiredPackages(ctx context.Context, req *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	tc, _, err := h.pythonToolchain(req.Info, false)
	if err != nil {
		return nil, err
	}
	stdout, stderr, conn, err := h.engineWriters(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := tc.EnsureVenv(ctx, req.Info.ProgramDirectory, false, true, stdout, stderr); err != nil {
		return nil, err
	}
	warnOnOldPython(ctx, tc)
	packages, err := requiredPackages(ctx, tc)
	if err != nil {
		return nil, err
	}
	return &pulumirpc.GetRequiredPackagesResponse{Packages: packages}, nil
}

// warnOnOldPython prints to stderr, which the CLI shows as a diagnostic, when the interpreter is older than
// Pulumi supports (validateVersion, main.go:1273-1309).
func warnOnOldPython(ctx context.Context, tc toolchain.Toolchain) {
	cmd, err := tc.Command(ctx, "--version")
	if err != nil {
		fmt.Fprintf(os.Stderr, "Failed to create python version command: %s\n", err)
		return
	}
	out, err := cmd.Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "Failed to resolve python version command: %s\n", err)
		return
	}
	text := strings.TrimSpace(strings.TrimPrefix(string(out), "Python "))
	if cut := strings.Index(text, "rc"); cut > 0 {
		text = strings.TrimSuffix(text[:cut], "-")
	}
	version, err := semver.Parse(text)
	if err != nil {
		fmt.Fprintf(os.Stderr, "Failed to parse python version: '%s'\n", text)
		return
	}
	if version.LT(minimumPython) {
		fmt.Fprintf(os.Stderr, "Pulumi does not support Python %s. Please upgrade to at least %s\n", version, minimumPython)
	}
}

// InstallDependencies is what `pulumi install` (and installing a source-based plugin) asks for: a plugin that is
// a buildable pyproject.toml package is installed into its virtualenv first, then the toolchain installs the
// dependencies. For pip that always starts with `python -m venv VENV` and `pip install --upgrade pip setuptools
// wheel` (sdk/v3 v3.274.0 python/toolchain/pip.go:468-585), also over an existing virtualenv (main.go:1311-1377).
func (h *Host) installPythonDependencies(req *pulumirpc.InstallDependenciesRequest,
	server pulumirpc.LanguageRuntime_InstallDependenciesServer,
) error {
	tc, _, err := h.pythonToolchain(req.Info, req.IsPlugin)
	if err != nil {
		return err
	}
	closer, stdout, stderr, err := rpcutil.MakeInstallDependenciesStreams(server, req.IsTerminal)
	if err != nil {
		return err
	}
	defer closer.Close()
	fmt.Fprint(stdout, "Installing dependencies...\n\n")
	if req.IsPlugin {
		buildable, err := toolchain.IsBuildablePackage(req.Info.ProgramDirectory)
		if err != nil {
			return fmt.Errorf("checking if plugin is a buildable package: %w", err)
		}
		if buildable {
			if err := tc.InstallPackage(server.Context(), req.Info.ProgramDirectory, req.UseLanguageVersionTools,
				true, stdout, stderr); err != nil {
				return err
			}
		}
	}
	if err := tc.InstallDependencies(server.Context(), req.Info.ProgramDirectory, req.UseLanguageVersionTools,
		true, stdout, stderr); err != nil {
		return err
	}
	fmt.Fprint(stdout, "Finished installing dependencies\n\n")
	return closer.Close()
}

func (h *Host) GetProgramDependencies(ctx context.Context, req *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	tc, _, err := h.pythonToolchain(req.Info, false)
	if err != nil {
		return nil, err
	}
	listed, err := tc.ListPackages(ctx, req.TransitiveDependencies)
	if err != nil {
		return nil, fmt.Errorf("failed to get python dependencies: %w", err)
	}
	deps := make([]*pulumirpc.DependencyInfo, len(listed))
	for i, dep := range listed {
		deps[i] = &pulumirpc.DependencyInfo{Name: dep.Name, Version: dep.Version}
	}
	return &pulumirpc.GetProgramDependenciesResponse{Dependencies: deps}, nil
}

// About answers `pulumi about` (main.go:1453-1485): without program info, the default python with pip.
func (h *Host) About(ctx context.Context, req *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	opts := toolchain.PythonOptions{Toolchain: toolchain.Pip}
	if req.GetInfo() != nil {
		parsed, err := pythonOptions(req.Info, false)
		if err != nil {
			return nil, err
		}
		opts = parsed
	}
	tc, err := toolchain.ResolveToolchain(opts)
	if err != nil {
		return nil, err
	}
	about, err := tc.About(ctx)
	if err != nil {
		return nil, err
	}
	return &pulumirpc.AboutResponse{
		Executable: about.PythonExecutable, Version: about.PythonVersion.String(),
		Metadata: map[string]string{
			"toolchain":        toolchain.Name(opts.Toolchain),
			"toolchainVersion": about.ToolchainVersion.String(),
			"typechecker":      toolchain.TypeCheckerName(opts.Typechecker),
		},
	}, nil
}
