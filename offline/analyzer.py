"""Talk to the policy pack over its real gRPC Analyzer interface, the way the Pulumi CLI does.

`PolicyPackProcess` starts the pack exactly as the CLI starts a Python pack (`python -u -m
pulumi.policy ENGINE_ADDRESS .` inside the pack's folder), reads the port it prints, and calls
`GetAnalyzerInfo`, `Configure`, `Analyze` and `AnalyzeStack` through the stubs in
`pulumi.runtime.proto`. Used by the offline preview, the end-to-end tests and the benchmark.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import grpc
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc, plugin_pb2

PACK_DIR = Path(__file__).resolve().parent.parent / "policies"
#: The Python pack never dials the engine back; the CLI passes its address all the same.
UNUSED_ENGINE_ADDRESS = "127.0.0.1:1"

LEVEL_NAMES = {
    analyzer_pb2.ADVISORY: "advisory",
    analyzer_pb2.MANDATORY: "mandatory",
    analyzer_pb2.DISABLED: "disabled",
    analyzer_pb2.REMEDIATE: "remediate",
}
LEVEL_VALUES = {"advisory": analyzer_pb2.ADVISORY, "mandatory": analyzer_pb2.MANDATORY,
                "disabled": analyzer_pb2.DISABLED, "remediate": analyzer_pb2.REMEDIATE}


@dataclass(frozen=True)
class Diagnostic:
    policy: str
    level: str
    urn: str
    message: str


def struct(properties: Mapping[str, Any]) -> struct_pb2.Struct:
    """Properties as the engine sends them: a protobuf Struct, in which every number is a double."""
    message = struct_pb2.Struct()
    message.update(properties)
    return message


class PolicyPackProcess:
    """The pack as a child process; use as a context manager."""

    def __init__(self, pack_dir: Path = PACK_DIR, python: str = sys.executable) -> None:
        self.pack_dir = pack_dir
        self.python = python
        self.process: subprocess.Popen[bytes] | None = None
        self.channel: grpc.Channel | None = None
        self.stub: analyzer_pb2_grpc.AnalyzerStub | None = None
        self.port = 0

    def start(self) -> PolicyPackProcess:
        """Start the pack's process without waiting for it: its interpreter start and imports then
        overlap whatever the caller does next (the offline preview runs the program meanwhile).
        `__enter__` waits for its port; `__exit__` ends it either way."""
        if self.process is None:
            env = {k: v for k, v in os.environ.items() if not k.startswith("PULUMI_")}
            self.process = subprocess.Popen(
                [self.python, "-u", "-m", "pulumi.policy", UNUSED_ENGINE_ADDRESS, "."],
                cwd=self.pack_dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        return self

    def __enter__(self) -> PolicyPackProcess:
        if self.stub is not None:
            return self  # entered already: its port was read and its channel is ready
        self.start()
        assert self.process is not None and self.process.stdout is not None
        first_line = self.process.stdout.readline().decode().strip()
        if not first_line.isdigit():
            stderr = self.process.stderr.read().decode() if self.process.stderr else ""
            self.__exit__(None, None, None)
            raise RuntimeError(f"the policy pack did not start: {first_line!r}\n{stderr}")
        self.port = int(first_line)
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.port}")
        grpc.channel_ready_future(self.channel).result(timeout=30)
        self.stub = analyzer_pb2_grpc.AnalyzerStub(self.channel)
        return self

    def __exit__(self, *exc: object) -> None:
        """End the pack's process and close the channel; a second call does nothing (the preview's
        `finally` ends a pack that `analyze`'s `with` may have ended already)."""
        # The pack's process goes first: closing a channel whose server still runs waits on gRPC's
        # polling (0.15 s a close, measured); with the server gone the close returns at once.
        process, channel = self.process, self.channel
        self.process, self.channel, self.stub = None, None, None
        if process is not None:
            process.kill()
            process.wait(timeout=10)
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    stream.close()
        if channel is not None:
            channel.close()

    @property
    def analyzer(self) -> analyzer_pb2_grpc.AnalyzerStub:
        assert self.stub is not None, "use PolicyPackProcess as a context manager"
        return self.stub

    def info(self) -> analyzer_pb2.AnalyzerInfo:
        return self.analyzer.GetAnalyzerInfo(empty_pb2.Empty())

    def plugin_info(self) -> plugin_pb2.PluginInfo:
        return self.analyzer.GetPluginInfo(empty_pb2.Empty())

    def configure(self, config: Mapping[str, Mapping[str, Any]]) -> None:
        """`Configure` as the CLI sends it: for every policy of the pack, its enforcement level (the
        one given, else the policy's default) and its properties (the schema's defaults, overlaid with
        the ones given). Sending a policy without a level would make it advisory."""
        request = analyzer_pb2.ConfigureAnalyzerRequest()
        for policy in self.info().policies:
            section = config.get(policy.name, {})
            defaults = {key: json_format.MessageToDict(schema).get("default")
                        for key, schema in policy.configSchema.properties.items()}
            properties = {k: v for k, v in defaults.items() if v is not None}
            properties.update({k: v for k, v in section.items() if k != "enforcementLevel"})
            level = LEVEL_VALUES[section["enforcementLevel"]] if "enforcementLevel" in section else policy.enforcementLevel
            request.policyConfig[policy.name].CopyFrom(
                analyzer_pb2.PolicyConfig(enforcementLevel=level, properties=struct(properties)))
        self.analyzer.Configure(request)

    def analyze(self, type_: str, name: str, properties: Mapping[str, Any] | struct_pb2.Struct,
                urn: str | None = None) -> list[Diagnostic]:
        props = properties if isinstance(properties, struct_pb2.Struct) else struct(properties)
        request = analyzer_pb2.AnalyzeRequest(
            type=type_, name=name, urn=urn or f"urn:pulumi:test::gpu-aks::{type_}::{name}", properties=props)
        return _diagnostics(self.analyzer.Analyze(request))

    def analyze_stack(self, resources: Sequence[tuple[str, str, str, Mapping[str, Any] | struct_pb2.Struct]]) -> list[Diagnostic]:
        """`resources`: (urn, type, name, properties) as the engine sends them after a deployment."""
        request = analyzer_pb2.AnalyzeStackRequest()
        for urn, type_, name, properties in resources:
            props = properties if isinstance(properties, struct_pb2.Struct) else struct(properties)
            request.resources.append(analyzer_pb2.AnalyzerResource(type=type_, urn=urn, name=name, properties=props))
        return _diagnostics(self.analyzer.AnalyzeStack(request))


@contextmanager
def terminated_as_exit() -> Iterator[None]:
    """While this holds, SIGTERM (a CI job's timeout, `make outputs`' trap) raises SystemExit(143) in
    the main thread, so the `finally` blocks and context managers that own a pack's process end it.
    Python's own SIGTERM ends the interpreter at once and leaves the pack running, its parent gone."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers belong to the main thread
        return

    def exit_(number: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + number)

    previous = signal.signal(signal.SIGTERM, exit_)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _diagnostics(response: analyzer_pb2.AnalyzeResponse) -> list[Diagnostic]:
    return [Diagnostic(d.policyName, LEVEL_NAMES.get(d.enforcementLevel, str(d.enforcementLevel)), d.urn, d.message)
            for d in response.diagnostics]


def wire_struct(wire_json: Mapping[str, Any]) -> struct_pb2.Struct:
    """A Struct from the JSON form of one (as `offline.mockrun` records registered inputs)."""
    return json_format.ParseDict(dict(wire_json), struct_pb2.Struct())
