package langhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	sdk "github.com/pulumi/pulumi/sdk/v3"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/pulumi/pulumi/sdk/v3/python/toolchain"
)

// userActionableExit is the exit code the exec shim uses after it has shown the user the error itself
// (pulumi-language-python-exec, PYTHON_PROCESS_EXITED_AFTER_SHOWING_USER_ACTIONABLE_MESSAGE_CODE).
const userActionableExit = 32

// pythonOptions reads Pulumi.yaml's runtime options as Pulumi's host does (parseOptions): virtualenv,
// toolchain pip|poetry|uv; a plugin with no virtualenv gets `venv`.
func pythonOptions(info *pulumirpc.ProgramInfo, isPlugin bool) (toolchain.PythonOptions, error) {
	opts := toolchain.PythonOptions{Root: info.RootDirectory, ProgramDir: info.ProgramDirectory}
	options := info.Options.AsMap()
	if v, ok := options["virtualenv"]; ok {
		s, ok := v.(string)
		if !ok {
			return opts, errors.New("virtualenv option must be a string")
		}
		opts.Virtualenv = s
	}
	if v, ok := options["toolchain"]; ok {
		switch v {
		case "pip":
			opts.Toolchain = toolchain.Pip
		case "poetry":
			opts.Toolchain = toolchain.Poetry
		case "uv":
			opts.Toolchain = toolchain.Uv
		default:
			return opts, fmt.Errorf("unsupported toolchain option: %v", v)
		}
	}
	if isPlugin && (opts.Toolchain == toolchain.Pip || opts.Toolchain == toolchain.Auto) && opts.Virtualenv == "" {
		opts.Virtualenv = "venv"
	}
	return opts, nil
}

func (h *Host) toolchain(info *pulumirpc.ProgramInfo, isPlugin bool) (toolchain.Toolchain, error) {
	if h.exec == "" {
		return nil, fmt.Errorf("the %s host here only generates SDKs", h.language)
	}
	opts, err := pythonOptions(info, isPlugin)
	if err != nil {
		return nil, err
	}
	return toolchain.ResolveToolchain(opts)
}

// Run starts the exec shim with the program, its config in PULUMI_CONFIG and the secret keys in
// PULUMI_CONFIG_SECRET_KEYS, as Pulumi's host does.
func (h *Host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	tc, err := h.toolchain(req.Info, false)
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
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	config, err := json.Marshal(req.GetConfig())
	if err != nil {
		return nil, fmt.Errorf("failed to serialize configuration: %w", err)
	}
	secretKeys := req.GetConfigSecretKeys()
	if secretKeys == nil {
		secretKeys = []string{}
	}
	keys, err := json.Marshal(secretKeys)
	if err != nil {
		return nil, err
	}
	if req.GetConfig() != nil {
		env = append(env, "PULUMI_CONFIG="+string(config))
	}
	cmd.Env = append(env, "PULUMI_CONFIG_SECRET_KEYS="+string(keys))

	if err := cmd.Run(); err != nil {
		_ = os.Stdout.Sync()
		_ = os.Stderr.Sync()
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			if status, ok := exitErr.Sys().(syscall.WaitStatus); ok && status.ExitStatus() == userActionableExit {
				return &pulumirpc.RunResponse{Bail: true}, nil
			}
			return &pulumirpc.RunResponse{Error: fmt.Sprintf("program exited with non-zero exit code: %d",
				exitErr.ExitCode())}, nil
		}
		return &pulumirpc.RunResponse{Error: fmt.Sprintf(
			"problem executing program (could not run language executor): %v", err)}, nil
	}
	return &pulumirpc.RunResponse{}, nil
}

// RunPlugin runs a policy pack (`python -u -m pulumi.policy ENGINE PACK_DIR`, in the pack's folder, with the
// stack's config it learns through sdk's PolicyProxy) or a source-based plugin (`python PLUGIN_DIR ARGS` in
// the consumer's folder when the plugin has a __main__.py, else `python -m pulumi.run.plugin NAME ARGS`).
func (h *Host) RunPlugin(req *pulumirpc.RunPluginRequest, server pulumirpc.LanguageRuntime_RunPluginServer) error {
	ctx := server.Context()
	analyzer := req.Kind == string(apitype.AnalyzerPlugin)
	tc, err := h.toolchain(req.Info, !analyzer)
	if err != nil {
		return err
	}
	var cmd *exec.Cmd
	_, statErr := os.Stat(filepath.Join(req.Info.RootDirectory, "__main__.py"))
	switch {
	case analyzer:
		args := append([]string{"-u", "-m", "pulumi.policy"}, req.Args...)
		cmd, err = tc.Command(ctx, append(args, req.Info.ProgramDirectory)...)
	case statErr == nil:
		cmd, err = tc.Command(ctx, append([]string{req.Info.ProgramDirectory}, req.Args...)...)
	default:
		pyproject, loadErr := toolchain.LoadPyproject(req.Info.RootDirectory)
		if loadErr != nil {
			return fmt.Errorf("plugin is not runnable, it provides neither __main__.py nor a buildable "+
				"pyproject.toml: %w", loadErr)
		}
		cmd, err = tc.ModuleCommand(ctx, "pulumi.run.plugin", append([]string{pyproject.Project.Name}, req.Args...)...)
	}
	if err != nil {
		return err
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
					return err
				}
				add("PULUMI_CONFIG", string(data))
			}
		}
	} else {
		cmd.Dir = req.Pwd
	}
	if cmd.Env == nil || len(cmd.Env) > 0 {
		cmd.Env = append(os.Environ(), cmd.Env...)
	}
	cmd.Env = append(cmd.Env, req.Env...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		err = fmt.Errorf("problem executing plugin program (could not run language executor): %w", err)
		if proxy != nil {
			// The engine already talks to the proxy: tell it, or it waits for a pack that never comes.
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
			return server.Send(&pulumirpc.RunPluginResponse{
				Output: &pulumirpc.RunPluginResponse_Exitcode{Exitcode: int32(exitErr.ExitCode())},
			})
		}
		return err
	}
	return closer.Close()
}

// GetRequiredPackages lists the provider plugins the virtualenv's Pulumi SDKs declare in their
// pulumi-plugin.json, so the engine knows them before the program starts.
func (h *Host) GetRequiredPackages(ctx context.Context, req *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	tc, err := h.toolchain(req.Info, false)
	if err != nil {
		return nil, err
	}
	venv, err := tc.VirtualEnvPath(ctx)
	if err != nil {
		return nil, err
	}
	found, err := filepath.Glob(filepath.Join(venv, "lib", "python*", "site-packages", "*", "pulumi-plugin.json"))
	if err != nil {
		return nil, err
	}
	packages := []*pulumirpc.PackageDependency{}
	for _, path := range found {
		var manifest struct {
			Resource bool   `json:"resource"`
			Name     string `json:"name"`
			Version  string `json:"version"`
			Server   string `json:"server"`
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, &manifest); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if !manifest.Resource || manifest.Name == "" {
			continue
		}
		if _, err := exec.LookPath("pulumi-resource-" + manifest.Name); err == nil &&
			os.Getenv("PULUMI_IGNORE_AMBIENT_PLUGINS") == "" {
			// Found on PATH: the engine loads it from there for a program (sdk/go/common/workspace/plugins.go,
			// getPluginInfoAndPath), but installing a source-based plugin (`pulumi package get-schema DIR`)
			// downloads every required package first, without looking on PATH. Pulumi's host lists it anyway;
			// offline that download fails, so a package served from PATH is not listed.
			continue
		}
		version := manifest.Version
		if version != "" && version[0] != 'v' {
			version = "v" + version
		}
		packages = append(packages, &pulumirpc.PackageDependency{
			Kind: string(apitype.ResourcePlugin), Name: manifest.Name, Version: version, Server: manifest.Server,
		})
	}
	return &pulumirpc.GetRequiredPackagesResponse{Packages: packages}, nil
}

// InstallDependencies creates the virtualenv if it is missing and installs requirements.txt into it.
func (h *Host) InstallDependencies(req *pulumirpc.InstallDependenciesRequest,
	server pulumirpc.LanguageRuntime_InstallDependenciesServer,
) error {
	tc, err := h.toolchain(req.Info, req.IsPlugin)
	if err != nil {
		return err
	}
	closer, stdout, stderr, err := rpcutil.MakeInstallDependenciesStreams(server, req.IsTerminal)
	if err != nil {
		return err
	}
	defer closer.Close()
	venv, err := tc.VirtualEnvPath(server.Context())
	if _, statErr := os.Stat(filepath.Join(req.Info.ProgramDirectory, "requirements.txt")); err == nil &&
		venv != "" && toolchain.IsVirtualEnv(venv) && statErr == nil {
		// The virtualenv is there: install requirements.txt into it. Pulumi's toolchain would first run
		// `python -m venv` over it again, which refuses a virtualenv that is a link ("Unable to create
		// directory"), as a copy of a checkout may have.
		cmd, err := tc.ModuleCommand(server.Context(), "pip", "install", "-r", "requirements.txt")
		if err != nil {
			return err
		}
		cmd.Dir, cmd.Stdout, cmd.Stderr = req.Info.ProgramDirectory, stdout, stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("installing dependencies into %s: %w", venv, err)
		}
		return closer.Close()
	}
	if err := tc.InstallDependencies(server.Context(), req.Info.ProgramDirectory, req.UseLanguageVersionTools,
		true, stdout, stderr); err != nil {
		return err
	}
	return closer.Close()
}

func (h *Host) GetProgramDependencies(ctx context.Context, req *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	tc, err := h.toolchain(req.Info, false)
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

func (h *Host) About(ctx context.Context, req *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	info := req.GetInfo()
	if info == nil {
		info = &pulumirpc.ProgramInfo{}
	}
	tc, err := h.toolchain(info, false)
	if err != nil {
		return nil, err
	}
	about, err := tc.About(ctx)
	if err != nil {
		return nil, err
	}
	return &pulumirpc.AboutResponse{Executable: about.PythonExecutable, Version: about.PythonVersion.String()}, nil
}
