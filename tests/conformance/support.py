"""Helpers of the conformance-kit tests (no tests here): paths, the CLI, port commands, scenarios."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from trio_harness.__main__ import main

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "spec"
PORTS = Path(__file__).resolve().parent / "ports"
SHARED = REPO.parent / "shared"
SHARED_REASON = "../shared (the upstream description and recorded vectors) is not present"


def port(name: str) -> str:
    """The command line of fixture port ``name`` (a script in ``ports/``)."""
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(PORTS / f'{name}.py'))}"


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run ``python -m trio_harness ARGV`` in this process; returns (status, stdout, stderr)."""
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def kit_cases() -> list[dict[str, Any]]:
    """Every line of the committed scheduling vectors, decoded."""
    with (SPEC / "scheduling-vectors.jsonl").open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def tool(name: str, parallel: Any = "always", **extra: Any) -> dict[str, Any]:
    """A scenario tool."""
    return {"name": name, "parallel": parallel, **extra}


def call(call_id: str, name: str = "read", ms: float | None = None, **extra: Any) -> dict[str, Any]:
    """A scenario call whose body takes ``ms`` (and returns its id)."""
    spec: dict[str, Any] = {"id": call_id, "name": name, **extra}
    if ms is not None:
        spec.setdefault("body", {})["ms"] = ms
    return spec


def summary(answer: dict[str, Any]) -> list[str]:
    """The events of an answer as ``call c0`` / ``result c0 <code or text>`` strings."""
    out = []
    for event in answer["events"]:
        data = event["data"]
        if event["type"] == "tool/call":
            out.append(f"call {data['callId']}")
        else:
            block = data["message"]["content"][0]
            code = (data.get("error") or {}).get("code")
            label = code or block["content"][0]["text"] if block["content"] else code or ""
            out.append(f"result {block['toolCallId']} {label}")
    return out


def times(answer: dict[str, Any], field: str) -> dict[str, Any]:
    """``{call id: time}`` of one field of the answer's per-call times."""
    return {entry["id"]: entry[field] for entry in answer["calls"]}
