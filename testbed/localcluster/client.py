"""A small Kubernetes REST client over one kept-alive HTTPS connection (kubectl per request would spend most of
a test's time starting kubectl)."""

from __future__ import annotations

import http.client
import json
import ssl
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .pki import Pki


class ClusterError(RuntimeError):
    """The control plane did not start, or a request to it failed."""


class InputError(ClusterError):
    """What was asked cannot be done: a folder or input the cluster cannot use, or no cluster where one is
    needed. Nothing was started."""


class ApiError(ClusterError):
    def __init__(self, method: str, path: str, status: int, body: Any) -> None:
        self.status = status
        self.body = body
        message = body.get("message") if isinstance(body, Mapping) else str(body)[:500]
        super().__init__(f"{method} {path}: HTTP {status}: {message}")

    @property
    def reason(self) -> str:
        return str(self.body.get("reason", "")) if isinstance(self.body, Mapping) else ""

    @property
    def message(self) -> str:
        return str(self.body.get("message", "")) if isinstance(self.body, Mapping) else str(self.body)


PATCH_TYPES = {"merge": "application/merge-patch+json", "strategic": "application/strategic-merge-patch+json",
               "json": "application/json-patch+json", "apply": "application/apply-patch+yaml"}


class Client:
    """Requests as one of the certificates under DIR/pki (`client`: a `pki.CLIENTS` stem)."""

    def __init__(self, server: str, pki: Pki, client: str = "admin") -> None:
        parsed = urllib.parse.urlsplit(server)
        self.host, self.port = parsed.hostname or "127.0.0.1", parsed.port or 443
        self.context = ssl.create_default_context(cafile=str(pki.path("ca.crt")))
        self.context.load_cert_chain(str(pki.path(f"{client}.crt")), str(pki.path(f"{client}.key")))
        self._connection: http.client.HTTPSConnection | None = None
        #: The `Warning` headers of the last response (a ValidatingAdmissionPolicy bound with `Warn`).
        self.warnings: list[str] = []

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def raw(self, method: str, path: str, body: Any = None, content_type: str = "application/json",
            timeout: float = 30.0) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        for attempt in (1, 2):
            if self._connection is None:
                self._connection = http.client.HTTPSConnection(self.host, self.port, context=self.context,
                                                               timeout=timeout)
            try:
                self._connection.request(method, path, body=data, headers=headers)
                response = self._connection.getresponse()
                payload = response.read()
                self.warnings = response.headers.get_all("Warning") or []
                break
            except (OSError, http.client.HTTPException):
                self.close()
                if attempt == 2:
                    raise
        try:
            parsed: Any = json.loads(payload) if payload else None
        except ValueError:
            parsed = payload.decode(errors="replace")
        return response.status, parsed

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Any:
        status, parsed = self.raw(method, path, body, content_type)
        if status >= 400:
            raise ApiError(method, path, status, parsed)
        return parsed

    def get(self, path: str) -> Any:
        return self.request("GET", path)

    def create(self, path: str, obj: Mapping[str, Any], dry_run: bool = False) -> Any:
        return self.request("POST", path + ("?dryRun=All" if dry_run else ""), obj)

    def patch(self, path: str, patch: Any, kind: str = "merge") -> Any:
        return self.request("PATCH", path, patch, PATCH_TYPES[kind])

    def delete(self, path: str, force: bool = False) -> None:
        """Deletes the object (404 is fine). `force`: grace period 0, for a pod whose end no kubelet would
        confirm in time (kwok's pod-delete stage removes a terminating pod at once anyway)."""
        status, parsed = self.raw("DELETE", path + ("?gracePeriodSeconds=0" if force else ""))
        if status >= 400 and status != 404:
            raise ApiError("DELETE", path, status, parsed)

    def exists(self, path: str) -> bool:
        status, parsed = self.raw("GET", path)
        if status >= 400 and status != 404:
            raise ApiError("GET", path, status, parsed)
        return status < 400

    def wait_for(self, what: str, test: Callable[[], bool], timeout: float = 30.0, every: float = 0.05) -> None:
        deadline = time.monotonic() + timeout
        while not test():
            if time.monotonic() > deadline:
                raise ClusterError(f"timed out after {timeout:.0f} s waiting for {what}")
            time.sleep(every)

    def ensure_namespace(self, name: str, annotations: Mapping[str, str] | None = None,
                         labels: Mapping[str, str] | None = None, timeout: float = 60.0) -> None:
        """The namespace, once its ServiceAccount `default` exists: the ServiceAccount admission plugin refuses
        a pod without it, and the controller-manager's serviceaccount controller creates it a moment after the
        namespace (as on any cluster)."""
        if not self.exists(f"/api/v1/namespaces/{name}"):
            metadata: dict[str, Any] = {"name": name}
            if annotations:
                metadata["annotations"] = dict(annotations)
            if labels:
                metadata["labels"] = dict(labels)
            status, body = self.raw("POST", "/api/v1/namespaces",
                                    {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata})
            if status >= 400 and status != 409:
                raise ApiError("POST", "/api/v1/namespaces", status, body)
        self.wait_for(f"the default ServiceAccount of namespace {name}",
                      lambda: self.exists(f"/api/v1/namespaces/{name}/serviceaccounts/default"), timeout, every=0.1)

    def set_taints(self, name: str, taints: Sequence[Mapping[str, Any]]) -> None:
        """Replaces the node's taints in one merge patch (a list in a JSON merge patch replaces the list): a
        GET then PUT lost the race with the node lifecycle controller's own taint updates (HTTP 409)."""
        self.patch(f"/api/v1/nodes/{name}", {"spec": {"taints": [dict(t) for t in taints] or None}})
