"""A Kubernetes cluster on this machine to deploy a gpu-aks stack to, without Azure.

    python -m tools.localcluster up DIR [--identity USER[:GROUP,...]]...
    python -m tools.localcluster nodes DIR OUTPUTS.json [--copies N]
    python -m tools.localcluster identity DIR USER [--group GROUP]...
    python -m tools.localcluster down DIR

`up` starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok (the Kubernetes
project's simulator of kubelets), built from their Go modules by `make engines` into build/engines/bin,
with DIR as their home: DIR/kubeconfig is the cluster admin's kubeconfig, DIR/logs/ holds each
program's output. Everything listens on 127.0.0.1 only. It serves what AKS serves for a gpu-aks stack:
RBAC, the admission plugins AKS runs, Karpenter's NodePool and AKSNodeClass CRDs (node auto-provisioning)
and Azure Managed Prometheus' PodMonitor kind. A second `up` in a folder where a cluster runs is refused;
a folder whose cluster is gone (its processes ended) starts afresh.

`nodes` registers nodes shaped like every GPU and CPU pool of a platform's outputs contract (`pulumi
stack output --json`, or `make outputs`' build/outputs-STACK.json): the labels AKS or Karpenter put on
them, the pool's taints, and the capacity its VM size has, with the pool's GPUs as the device plugin
advertises them. kwok keeps them Ready and runs the pods bound to them: a pod goes Running and Ready, a
Job's pods Succeeded; no image is pulled and no container runs. The controller-manager does the rest as
on any cluster: Deployments, DaemonSets and Jobs make their pods, garbage collection removes what an
owner leaves, a terminating namespace empties. A pool with no node (a pool that scales from zero, or one
`nodes` was not asked for) leaves its pods Pending, as on AKS until a node comes up.

`identity` prints the path of a kubeconfig that authenticates as USER, member of each GROUP, with a
bearer token (as a kubelogin token reaches AKS); RBAC decides what it may do. A new identity restarts
kube-apiserver, which reads its token file only at start; name identities at `up` to avoid that.

`down` stops every process `up` started (by the pids it recorded) and leaves DIR with its logs.

To deploy a stack (docs/local-cluster.md): `up`, `nodes`, then the Pulumi CLI `make engines` built with
GPU_AKS_LOCAL_KUBECONFIG=DIR/kubeconfig, so that the stand-in Azure hands out this cluster and the real
pulumi-kubernetes provider deploys to it.

Exit codes: 0 done, 1 the cluster failed (the message names the log to read), 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from gpu_aks_policies.limits import MAX_LOCAL_NODE_COPIES
from gpu_aks_policies.terminal import escape_line, escape_text, run_cli

from testbed import localcluster
from testbed.localcluster.control_plane import InputError


def _identity(text: str) -> tuple[str, list[str]]:
    user, _, groups = text.partition(":")
    return user, [group for group in groups.split(",") if group]


def _up(args: argparse.Namespace) -> int:
    identities = dict(_identity(text) for text in args.identity)
    localcluster.start(args.directory, identities=identities,
                       log=lambda line: print(escape_text(f"==> {line}"), flush=True))
    return 0


def _nodes(args: argparse.Namespace) -> int:
    if not 1 <= args.copies <= MAX_LOCAL_NODE_COPIES:
        raise InputError(f"--copies {args.copies}: give 1 to {MAX_LOCAL_NODE_COPIES}")
    nodes = localcluster.contract_nodes(args.outputs, args.copies)
    client = localcluster.attach(args.directory).client()
    try:
        localcluster.register(client, nodes)
    finally:
        client.close()
    for node in nodes:
        metadata = node["metadata"]
        print(escape_text(f"==> node {escape_line(metadata['name'])} "
                          f"({escape_line(metadata['annotations'][localcluster.POOL_ANNOTATION])}) Ready"))
    return 0


def _identity_command(args: argparse.Namespace) -> int:
    cluster = localcluster.attach(args.directory)
    print(escape_text(escape_line(str(cluster.identity_kubeconfig(args.user, args.group)))))
    return 0


def _down(args: argparse.Namespace) -> int:
    stopped = localcluster.stop(args.directory)
    print(escape_text(f"==> stopped {stopped} process(es) of {escape_line(str(args.directory.resolve()))}"))
    return 0


def parser() -> argparse.ArgumentParser:
    parsing = argparse.ArgumentParser(prog="python -m tools.localcluster", description=__doc__,
                                      formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parsing.add_subparsers(dest="command", required=True, metavar="COMMAND")
    up = sub.add_parser("up", help="start the cluster in DIR; writes DIR/kubeconfig (cluster-admin)",
                        description="Start etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok "
                                    "in DIR (created if missing); returns once every one is ready.")
    up.add_argument("directory", type=Path, metavar="DIR")
    up.add_argument("--identity", action="append", default=[], metavar="USER[:GROUP,...]",
                    help="give USER (in each GROUP) a bearer token from the start (repeatable)")
    nodes = sub.add_parser("nodes", help="register Ready nodes shaped like every GPU and CPU pool of a platform",
                           description="Register nodes shaped like every GPU and CPU pool of the platform's outputs "
                                       "contract; returns once each is Ready.")
    nodes.add_argument("directory", type=Path, metavar="DIR")
    nodes.add_argument("outputs", metavar="OUTPUTS.json",
                       help="the platform's outputs (`pulumi stack output --json`, or `make outputs`' "
                            "build/outputs-STACK.json)")
    nodes.add_argument("--copies", type=int, default=1, help=f"nodes of each kind per pool (1 to {MAX_LOCAL_NODE_COPIES}; "
                                                             "default 1)")
    identity = sub.add_parser("identity", help="print a kubeconfig path that authenticates as USER with a token",
                              description="Print the path of a kubeconfig that authenticates as USER, member of each "
                                          "GROUP, with a bearer token; RBAC decides what it may do.")
    identity.add_argument("directory", type=Path, metavar="DIR")
    identity.add_argument("user", metavar="USER")
    identity.add_argument("--group", action="append", default=[], metavar="GROUP", help="a group of USER (repeatable)")
    down = sub.add_parser("down", help="stop everything `up` started in DIR (DIR stays, with its logs)",
                          description="Stop every process `up` started in DIR; DIR stays, with its logs.")
    down.add_argument("directory", type=Path, metavar="DIR")
    return parsing


COMMANDS = {"up": _up, "nodes": _nodes, "identity": _identity_command, "down": _down}


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except (InputError, localcluster.IdentityError) as error:
        print(escape_text(f"error: {escape_line(str(error))}"), file=sys.stderr)
        return 2
    except localcluster.ClusterError as error:
        print(escape_text(f"error: {escape_line(str(error))}"), file=sys.stderr)
        return 1
    except OSError as error:  # a DIR this user cannot write, a path that is not a folder
        print(escape_text(f"error: {escape_line(str(error))}"), file=sys.stderr)
        return 2


if __name__ == "__main__":
    run_cli(main)
