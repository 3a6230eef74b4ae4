#!/bin/sh
# Copies the provider's committed schema.json and terraform-mapping.json out of the module cache so
# main.go can embed them (go:embed reads only files beside the package). Run by testbed/build.py
# before the build, in this folder.
set -eu
go mod download github.com/pulumi/pulumi-kubernetes/provider/v4
dir=$(go list -mod=readonly -m -f '{{.Dir}}' github.com/pulumi/pulumi-kubernetes/provider/v4)
for f in schema.json terraform-mapping.json; do
  install -m 0644 "$dir/cmd/pulumi-resource-kubernetes/$f" "./$f"
done
