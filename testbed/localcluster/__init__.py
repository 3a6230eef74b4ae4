"""A Kubernetes cluster on loopback for the `cluster` tier and for anyone who wants to deploy a stack to it
(`python -m tools.localcluster`): the owners' programs (etcd, kube-apiserver, kube-controller-manager,
kube-scheduler, kwok) built by `make engines`, nodes shaped like a platform's pools.

    control_plane   start, stop and attach to a cluster in a folder; what runs and why
    nodes           nodes from a platform's outputs contract, registered as kubelets would
    client          a small REST client, as the cluster admin
    pki             the credentials: certificates, the service-account key, identities' tokens
    processes       the processes, by pid and binary
    kueue           Kueue's controller manager against the cluster (its CRDs, certificates and webhooks)
"""

from .client import ApiError, Client, ClusterError, InputError
from .control_plane import STATE_FILE, Cluster, attach, programs, running, start, stop
from .nodes import POOL_ANNOTATION, contract_nodes, contract_pool_nodes, pool_nodes, register, stack_nodes
from .pki import IdentityError
from .processes import alive

__all__ = ["POOL_ANNOTATION", "STATE_FILE", "ApiError", "Client", "Cluster", "ClusterError", "IdentityError",
           "InputError", "alive", "attach", "contract_nodes", "contract_pool_nodes", "pool_nodes", "programs",
           "register", "running", "stack_nodes", "start", "stop"]
