"""What every stand-in provider shares: the provider gRPC service the Pulumi engine speaks, served on
loopback from the protos the pulumi Python SDK ships (`pulumi.runtime.proto`), and a record of every call.

A stand-in is a provider plugin like any other to the engine: it is started as `pulumi-resource-<name>`,
prints its port on stdout and serves `pulumirpc.ResourceProvider` (pulumi/pulumi `proto/pulumi/provider.proto`).
It answers as its model says the real service would; it never reaches a cloud. Each call is appended to
the JSON-lines file named by GPU_AKS_STANDIN_LOG (if set), secrets masked, so a test can say what the
engine asked for and in which order.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from collections.abc import Callable, Mapping
from concurrent import futures
from typing import Any

import grpc
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime import rpc
from pulumi.runtime.proto import plugin_pb2, provider_pb2, provider_pb2_grpc

#: The engine's wire markers, as the SDK names them (pulumi `sdk/python/lib/pulumi/runtime/rpc.py`, after
#: `sdk/go/common/resource/properties.go`): a secret is an object with this signature key and value; an
#: unknown (a value not known until apply) is this string.
SIG = rpc._special_sig_key
SECRET_SIG = rpc._special_secret_sig
UNKNOWN = rpc.UNKNOWN

RECORD_ENV = "GPU_AKS_STANDIN_LOG"


class ProviderError(Exception):
    """A failure the provider reports to the engine as the operation's error."""


def to_dict(struct: struct_pb2.Struct | None) -> dict[str, Any]:
    return json_format.MessageToDict(struct) if struct is not None else {}


def to_struct(value: Mapping[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(dict(value))
    return struct


def is_secret(value: Any) -> bool:
    return isinstance(value, dict) and value.get(SIG) == SECRET_SIG


def reveal(value: Any) -> Any:
    """`value` with every secret unwrapped (for comparing and computing; never for the record)."""
    if is_secret(value):
        return reveal(value.get("value"))
    if isinstance(value, dict):
        return {key: reveal(item) for key, item in value.items()}
    if isinstance(value, list):
        return [reveal(item) for item in value]
    return value


def masked(value: Any) -> Any:
    """`value` with each secret replaced by a short digest: a record can show that a secret arrived, and
    which, without holding it."""
    if is_secret(value):
        digest = hashlib.sha256(json.dumps(value.get("value"), sort_keys=True).encode()).hexdigest()[:16]
        return f"[secret sha256:{digest}]"
    if isinstance(value, dict):
        return {key: masked(item) for key, item in value.items()}
    if isinstance(value, list):
        return [masked(item) for item in value]
    return value


def has_unknown(value: Any) -> bool:
    if value == UNKNOWN:
        return True
    if isinstance(value, dict):
        return any(has_unknown(item) for item in value.values())
    if isinstance(value, list):
        return any(has_unknown(item) for item in value)
    return False


def secret(value: Any) -> dict[str, Any]:
    return {SIG: SECRET_SIG, "value": value}


class Recorder:
    """Appends one JSON line per call to GPU_AKS_STANDIN_LOG; a lock keeps concurrent calls' lines whole."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.path = os.environ.get(RECORD_ENV, "")
        self._lock = threading.Lock()

    def __call__(self, method: str, **fields: Any) -> None:
        if not self.path:
            return
        line = json.dumps({"provider": self.provider, "method": method, **masked(fields)}, sort_keys=True)
        with self._lock, open(self.path, "a", encoding="utf-8") as out:
            out.write(line + "\n")


def name_of(urn: str) -> str:
    return urn.rsplit("::", 1)[-1]


def type_of(urn: str) -> str:
    return urn.split("::")[-2].rsplit("$", 1)[-1]


class Model:
    """One provider's behaviour, over plain dicts; the servicer below turns it into gRPC answers."""

    name = ""
    version = ""

    def check(self, type_: str, name: str, olds: dict[str, Any], news: dict[str, Any], seed: bytes,
              ) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        return news, []

    def diff(self, type_: str, olds: dict[str, Any], news: dict[str, Any], ignore: list[str],
             ) -> tuple[list[str], list[str], bool]:
        """(changed keys, keys that force replacement, delete before replace)."""
        changed = sorted(key for key in set(olds) | set(news) if key not in ignore and olds.get(key) != news.get(key))
        return changed, [], False

    def create(self, type_: str, name: str, inputs: dict[str, Any], preview: bool) -> tuple[str, dict[str, Any]]:
        raise NotImplementedError

    def update(self, type_: str, id_: str, olds: dict[str, Any], old_inputs: dict[str, Any],
               news: dict[str, Any], preview: bool) -> dict[str, Any]:
        return {**olds, **news}

    def delete(self, type_: str, id_: str, state: dict[str, Any]) -> None:
        return None

    def configure(self, variables: dict[str, str]) -> None:
        """The provider's configuration (`ConfigureRequest.variables`, keys `<package>:config:<key>`)."""

    def read(self, type_: str, id_: str, state: dict[str, Any], inputs: dict[str, Any] | None,
             ) -> tuple[str, dict[str, Any], dict[str, Any] | None] | None:
        """(id, outputs, inputs) as the resource stands now, or None when it is gone. By default the state
        Pulumi holds: a model with no world outside the engine has nothing to compare it with."""
        return id_, state, inputs

    def invoke(self, token: str, args: dict[str, Any]) -> dict[str, Any]:
        raise ProviderError(f"{self.name} stand-in: the function {token} is not modelled")


class Servicer(provider_pb2_grpc.ResourceProviderServicer):
    def __init__(self, model: Model) -> None:
        self.model = model
        self.record = Recorder(model.name)

    def _guard(self, context: grpc.ServicerContext, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except ProviderError as error:
            context.abort(grpc.StatusCode.UNKNOWN, str(error))

    def GetPluginInfo(self, request: empty_pb2.Empty, context: grpc.ServicerContext) -> plugin_pb2.PluginInfo:
        return plugin_pb2.PluginInfo(version=self.model.version)

    def GetSchema(self, request: Any, context: grpc.ServicerContext) -> provider_pb2.GetSchemaResponse:
        # Enough for the engine to name the package; the stand-ins generate no SDKs.
        return provider_pb2.GetSchemaResponse(schema=json.dumps({"name": self.model.name, "version": self.model.version}))

    def CheckConfig(self, request: provider_pb2.CheckRequest, context: grpc.ServicerContext) -> provider_pb2.CheckResponse:
        self.record("CheckConfig", urn=request.urn, news=to_dict(request.news))
        return provider_pb2.CheckResponse(inputs=request.news)

    def DiffConfig(self, request: provider_pb2.DiffRequest, context: grpc.ServicerContext) -> provider_pb2.DiffResponse:
        olds, news = to_dict(request.old_inputs or request.olds), to_dict(request.news)
        changed = sorted(key for key in set(olds) | set(news) if olds.get(key) != news.get(key))
        return provider_pb2.DiffResponse(changes=provider_pb2.DiffResponse.DIFF_SOME if changed
                                         else provider_pb2.DiffResponse.DIFF_NONE, diffs=changed)

    def Configure(self, request: provider_pb2.ConfigureRequest, context: grpc.ServicerContext,
                  ) -> provider_pb2.ConfigureResponse:
        self.record("Configure", args=to_dict(request.args))
        self.model.configure(dict(request.variables))
        return provider_pb2.ConfigureResponse(acceptSecrets=True, supportsPreview=True, acceptResources=False)

    def Check(self, request: provider_pb2.CheckRequest, context: grpc.ServicerContext) -> provider_pb2.CheckResponse:
        type_, name = request.type or type_of(request.urn), request.name or name_of(request.urn)
        news = to_dict(request.news)
        self.record("Check", urn=request.urn, type=type_, news=news)

        def check() -> provider_pb2.CheckResponse:
            inputs, failures = self.model.check(type_, name, to_dict(request.olds), news, request.randomSeed)
            return provider_pb2.CheckResponse(inputs=to_struct(inputs), failures=[
                provider_pb2.CheckFailure(property=key, reason=reason) for key, reason in failures])
        return self._guard(context, check)

    def Diff(self, request: provider_pb2.DiffRequest, context: grpc.ServicerContext) -> provider_pb2.DiffResponse:
        type_ = request.type or type_of(request.urn)
        olds = to_dict(request.old_inputs) if request.HasField("old_inputs") else to_dict(request.olds)
        news = to_dict(request.news)

        def diff() -> provider_pb2.DiffResponse:
            changed, replaces, delete_first = self.model.diff(type_, olds, news, list(request.ignoreChanges))
            self.record("Diff", urn=request.urn, type=type_, changed=changed, replaces=replaces,
                        deleteBeforeReplace=delete_first)
            kind = provider_pb2.PropertyDiff
            detailed = {key: kind(kind=kind.UPDATE_REPLACE if key in replaces else kind.UPDATE, inputDiff=True)
                        for key in changed}
            return provider_pb2.DiffResponse(
                changes=provider_pb2.DiffResponse.DIFF_SOME if changed else provider_pb2.DiffResponse.DIFF_NONE,
                diffs=changed, replaces=replaces, deleteBeforeReplace=delete_first, detailedDiff=detailed,
                hasDetailedDiff=True)
        return self._guard(context, diff)

    def Create(self, request: provider_pb2.CreateRequest, context: grpc.ServicerContext) -> provider_pb2.CreateResponse:
        type_, name = request.type or type_of(request.urn), request.name or name_of(request.urn)
        inputs = to_dict(request.properties)
        self.record("Create", urn=request.urn, type=type_, preview=request.preview, inputs=inputs)

        def create() -> provider_pb2.CreateResponse:
            id_, outputs = self.model.create(type_, name, inputs, request.preview)
            return provider_pb2.CreateResponse(id=id_, properties=to_struct(outputs))
        return self._guard(context, create)

    def Read(self, request: provider_pb2.ReadRequest, context: grpc.ServicerContext) -> provider_pb2.ReadResponse:
        type_ = request.type or type_of(request.urn)
        self.record("Read", urn=request.urn, type=type_, id=request.id)

        def read() -> provider_pb2.ReadResponse:
            inputs = to_dict(request.inputs) if request.HasField("inputs") else None
            found = self.model.read(type_, request.id, to_dict(request.properties), inputs)
            if found is None:
                return provider_pb2.ReadResponse(id="")  # gone: the engine drops it from the state
            id_, outputs, read_inputs = found
            return provider_pb2.ReadResponse(id=id_, properties=to_struct(outputs),
                                             inputs=to_struct(read_inputs) if read_inputs is not None else None)
        return self._guard(context, read)

    def Update(self, request: provider_pb2.UpdateRequest, context: grpc.ServicerContext) -> provider_pb2.UpdateResponse:
        type_ = request.type or type_of(request.urn)
        news = to_dict(request.news)
        self.record("Update", urn=request.urn, type=type_, preview=request.preview, news=news)

        def update() -> provider_pb2.UpdateResponse:
            outputs = self.model.update(type_, request.id, to_dict(request.olds), to_dict(request.old_inputs), news,
                                        request.preview)
            return provider_pb2.UpdateResponse(properties=to_struct(outputs))
        return self._guard(context, update)

    def Delete(self, request: provider_pb2.DeleteRequest, context: grpc.ServicerContext) -> empty_pb2.Empty:
        type_ = request.type or type_of(request.urn)
        self.record("Delete", urn=request.urn, type=type_, id=request.id)
        self._guard(context, lambda: self.model.delete(type_, request.id, to_dict(request.properties)))
        return empty_pb2.Empty()

    def Invoke(self, request: provider_pb2.InvokeRequest, context: grpc.ServicerContext) -> provider_pb2.InvokeResponse:
        args = to_dict(request.args)
        self.record("Invoke", token=request.tok, args=args)
        result = self._guard(context, lambda: self.model.invoke(request.tok, args))
        return provider_pb2.InvokeResponse(**{"return": to_struct(result)})

    def Cancel(self, request: empty_pb2.Empty, context: grpc.ServicerContext) -> empty_pb2.Empty:
        return empty_pb2.Empty()


def serve(model: Model) -> None:
    """Serve on a loopback port the kernel picks, print it for the engine, and run until the engine stops us."""
    if "--version" in sys.argv[1:]:
        print(model.version)
        return
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8),
                         options=[("grpc.max_receive_message_length", 400 * 1024 * 1024)])
    provider_pb2_grpc.add_ResourceProviderServicer_to_server(Servicer(model), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(port, flush=True)
    server.wait_for_termination()
