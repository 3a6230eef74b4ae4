package langhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/pulumi/pulumi/sdk/v3/python/toolchain"
)

// Pulumi's host lists every distribution of the virtualenv and tells the engine which provider each Pulumi SDK
// wants, at the SDK's version: that is how the engine knows to expect azure-native 3.29.0 and kubernetes 4.34.2,
// and warns when the plugin it loads reports another version (pkg/v3 host/host.go:409 at v3.274.0). The steps
// below follow pulumi/pulumi sdk/python/cmd/pulumi-language-python/main.go at 1b5949891b3c (the newest copy of
// the host there is; the proxy serves its module at no version): listPulumiPackageInfos (:608-656),
// packageDependencyFromPluginJSON (:658-736) and determinePluginVersion (:751-848).

// withoutPlugins are distributions Pulumi's host knows carry no provider although their name says pulumi-
// (main.go:550-556).
var withoutPlugins = map[string]bool{"pulumi-policy": true, "pulumi-esc-sdk": true}

// pluginJSONScript prints, for each distribution named on its command line, the path of the pulumi-plugin.json in
// its top-level package ("" when it has none), as a JSON object; what main.go:558-569 asks the interpreter.
const pluginJSONScript = `import importlib.metadata, importlib.util, json, os, sys
found = {}
for name in sys.argv[1:]:
    found[name] = ""
    try:
        module = importlib.metadata.distribution(name).metadata["Name"].replace("-", "_")
        spec = importlib.util.find_spec(module)
    except Exception:
        continue
    for folder in (spec.submodule_search_locations or []) if spec else []:
        candidate = os.path.join(str(folder), "pulumi-plugin.json")
        if os.path.isfile(candidate):
            found[name] = candidate
            break
print(json.dumps(found))`

// requiredPackages is what GetRequiredPackages answers: one resource package for each installed Pulumi SDK.
func requiredPackages(ctx context.Context, tc toolchain.Toolchain) ([]*pulumirpc.PackageDependency, error) {
	installed, err := tc.ListPackages(ctx, true)
	if err != nil {
		return nil, err
	}
	paths, err := pluginJSONPaths(ctx, tc, installed)
	if err != nil {
		return nil, err
	}
	packages := []*pulumirpc.PackageDependency{}
	for _, dist := range installed {
		if withoutPlugins[dist.Name] {
			continue
		}
		var manifest *plugin.PulumiPluginJSON
		if path := paths[dist.Name]; path != "" {
			data, err := os.ReadFile(path)
			if err != nil {
				continue // as main.go:631-633: an unreadable file is skipped, not an error
			}
			manifest = &plugin.PulumiPluginJSON{}
			if err := json.Unmarshal(data, manifest); err != nil {
				return nil, fmt.Errorf("failed to parse pulumi-plugin.json for %s: %w", dist.Name, err)
			}
		}
		// A Pulumi package has a pulumi-plugin.json, or (older SDKs) a name that starts with pulumi- (main.go:641-646).
		if manifest == nil && !strings.HasPrefix(dist.Name, "pulumi-") {
			continue
		}
		if dependency := packageDependency(dist, manifest); dependency != nil {
			packages = append(packages, dependency)
		}
	}
	return packages, nil
}

// pluginJSONPaths runs pluginJSONScript with the toolchain's interpreter. Like Pulumi's host, a failure to run it
// means "no pulumi-plugin.json anywhere" rather than an error (main.go:590-598).
func pluginJSONPaths(ctx context.Context, tc toolchain.Toolchain, installed []plugin.DependencyInfo,
) (map[string]string, error) {
	if len(installed) == 0 {
		return map[string]string{}, nil
	}
	args := []string{"-c", pluginJSONScript}
	for _, dist := range installed {
		args = append(args, dist.Name)
	}
	cmd, err := tc.Command(ctx, args...)
	if err != nil {
		return map[string]string{}, nil
	}
	out, err := cmd.Output()
	if err != nil {
		return map[string]string{}, nil
	}
	paths := map[string]string{}
	if err := json.Unmarshal(out, &paths); err != nil {
		return nil, fmt.Errorf("failed to parse pulumi-plugin.json paths: %w", err)
	}
	return paths, nil
}

// packageDependency is the package one distribution asks for: name, version and server from its
// pulumi-plugin.json, else from the distribution (pulumi-foo 1.2.3 -> foo v1.2.3); nil when the manifest says it has
// no provider (`"resource": false`) or the version cannot be turned into a plugin version.
func packageDependency(dist plugin.DependencyInfo, manifest *plugin.PulumiPluginJSON) *pulumirpc.PackageDependency {
	dependency := &pulumirpc.PackageDependency{Kind: string(apitype.ResourcePlugin)}
	if manifest != nil {
		if !manifest.Resource {
			return nil
		}
		dependency.Name, dependency.Version, dependency.Server = manifest.Name, manifest.Version, manifest.Server
		dependency.Parameterization = parameterization(manifest.Parameterization)
		dependency.Extension = parameterization(manifest.ExtensionParameterization)
	}
	if dependency.Name == "" {
		dependency.Name = strings.TrimPrefix(dist.Name, "pulumi-")
	}
	if dependency.Version == "" {
		version, err := pluginVersion(dist.Version)
		if err != nil {
			return nil
		}
		dependency.Version = version
	}
	if !strings.HasPrefix(dependency.Version, "v") {
		dependency.Version = "v" + dependency.Version
	}
	return dependency
}

func parameterization(p *plugin.PulumiParameterizationJSON) *pulumirpc.PackageParameterization {
	if p == nil {
		return nil
	}
	return &pulumirpc.PackageParameterization{Name: p.Name, Version: p.Version, Value: p.Value}
}

// pluginVersion turns a PEP 440 version into the plugin's semver, as Pulumi's host does for the subset
// `N(.N)*[{a|b|rc}N][.postN][.devN]`: at least three release numbers (1.0 -> 1.0.0); a4, b4, rc4 ->
// -alpha.4, -beta.4, -rc.4; .post4 -> +post4, .dev5 -> +dev5, both -> +post4dev5. Epochs and anything else are
// refused.
func pluginVersion(version string) (string, error) {
	if version == "" {
		return "", errors.New("cannot parse empty string")
	}
	for i := 0; i < len(version); i++ {
		if version[i] > 127 {
			return "", fmt.Errorf("byte %d is not ascii", i)
		}
	}
	digits := func(s string) (string, string) {
		end := 0
		for end < len(s) && s[end] >= '0' && s[end] <= '9' {
			end++
		}
		return s[:end], s[end:]
	}
	if number, rest := digits(version); number != "" && strings.HasPrefix(rest, "!") {
		return "", errors.New("epochs are not supported")
	}
	var release []string
	rest := version
	for {
		number, after := digits(rest)
		if number == "" {
			break
		}
		release = append(release, number)
		rest = after
		if !strings.HasPrefix(rest, ".") {
			break
		}
		if next, _ := digits(rest[1:]); next == "" {
			break // ".post"/".dev" follow: keep the dot for them
		}
		rest = rest[1:]
	}
	for len(release) < 3 {
		release = append(release, "0")
	}
	result := strings.Join(release, ".")
	var number string
	switch {
	case strings.HasPrefix(rest, "rc"):
		number, rest = digits(rest[2:])
		result += "-rc." + number
	case strings.HasPrefix(rest, "a"):
		number, rest = digits(rest[1:])
		result += "-alpha." + number
	case strings.HasPrefix(rest, "b"):
		number, rest = digits(rest[1:])
		result += "-beta." + number
	}
	separator := "+"
	if strings.HasPrefix(rest, ".post") {
		number, rest = digits(rest[len(".post"):])
		result += separator + "post" + number
		separator = ""
	}
	if strings.HasPrefix(rest, ".dev") {
		number, rest = digits(rest[len(".dev"):])
		result += separator + "dev" + number
	}
	if rest != "" {
		return "", fmt.Errorf("'%s' still unparsed", rest)
	}
	return result, nil
}
