"""The billing example over Streamable HTTP with the Python `mcp` SDK: a bearer token on every
request, a session opened by `initialize` and ended by the SDK's `DELETE` when the client closes.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent

HERE = Path(__file__).resolve().parent
BIN = Path(os.environ.get("FUSION_BILLING_BIN") or HERE / "../../target/debug/fusion-billing").resolve()

pytestmark = pytest.mark.anyio


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def serve_billing(*flags: str) -> Iterator[tuple[str, dict[str, str]]]:
    """`fusion-billing --http` on a free port with `flags`: its MCP URL and the development
    tokens it prints, by name (`BILLING_TOKEN`: subject dev-payer, the charge and refund scopes;
    `BILLING_TOKEN_READ_ONLY`: subject dev-viewer, no scope)."""
    if not BIN.is_file():
        pytest.fail(f"fusion-billing not found at {BIN} (build it: cargo build -p examples --bin fusion-billing)")
    port = free_port()
    child = subprocess.Popen(
        [str(BIN), *flags, "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "RUST_LOG": "warn"},
    )
    try:
        seen = []
        deadline = time.monotonic() + 20
        tokens: dict[str, str] = {}
        while len(tokens) < 2 and time.monotonic() < deadline:
            line = child.stderr.readline()
            if not line:
                break
            seen.append(line)
            match = re.match(r"export (BILLING_TOKEN(?:_READ_ONLY)?)=(\S+)$", line.strip())
            if match:
                tokens[match.group(1)] = match.group(2)
        if len(tokens) < 2:
            pytest.fail("fusion-billing printed no tokens:\n" + "".join(seen))
        yield f"http://127.0.0.1:{port}/mcp", tokens
    finally:
        child.terminate()
        child.wait(timeout=5)


@pytest.fixture
def billing_http_tokens() -> Iterator[tuple[str, dict[str, str]]]:
    """`fusion-billing --http` on a free port: see `serve_billing`."""
    with serve_billing() as served:
        yield served


@pytest.fixture
def billing_http(billing_http_tokens: tuple[str, dict[str, str]]) -> tuple[str, str]:
    """`fusion-billing --http` on a free port: its MCP URL and the token with the charge scope."""
    url, tokens = billing_http_tokens
    return url, tokens["BILLING_TOKEN"]


async def test_a_session_over_http_answers_and_ends_cleanly(
    billing_http: tuple[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    url, token = billing_http
    caplog.set_level(logging.WARNING)
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=20) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                listed = await session.call_tool("billing", {"action": "list_invoices"})
                assert not listed.is_error
                wrong = await session.call_tool("billing", {"action": "get_invoice", "idd": "inv_1"})
                assert wrong.is_error
                text = wrong.content[0]
                assert isinstance(text, TextContent)
                assert '<field name="idd">Unknown field.' in text.text, text.text
                assert wrong.meta["fusion/error"]["code"] == "VALIDATION_ERROR"
    # Closing sent `DELETE`: the SDK warns unless the server answers 200 or 204.
    failed = [r.getMessage() for r in caplog.records if "termination" in r.getMessage().lower()]
    assert failed == [], failed


async def test_a_token_without_a_scope_lists_no_action_needing_it_when_hiding() -> None:
    with serve_billing("--hide-unauthorized-actions") as (url, tokens):
        for name, sees_charge in [("BILLING_TOKEN_READ_ONLY", False), ("BILLING_TOKEN", True)]:
            headers = {"Authorization": f"Bearer {tokens[name]}"}
            async with httpx2.AsyncClient(headers=headers, timeout=20) as http:
                async with streamable_http_client(url, http_client=http) as (read, write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        tools = (await session.list_tools()).tools
                        billing = next(tool for tool in tools if tool.name == "billing")
                        actions = billing.input_schema["properties"]["action"]["enum"]
                        assert ("charge" in actions) == sees_charge, (name, actions)
                        assert ("charge" in billing.meta.get("fusion/scopes", {})) == sees_charge
                        if not sees_charge:
                            # The hidden action answers as one the tool does not have.
                            refused = await session.call_tool("billing", {"action": "charge"})
                            assert refused.is_error
                            assert refused.meta["fusion/error"]["code"] == "UNKNOWN_ACTION"
