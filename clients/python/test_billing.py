"""Real-client interoperability tests: the official Python MCP SDK against `fusion-billing`.

The server binary is spawned over stdio (one fresh process per test, so the in-memory
billing state always starts from the seed data). Every test runs twice: once with the
SDK's default connect mode (`auto`: probe `server/discover`, i.e. the stateless
2026-07-28 era, falling back to the initialize handshake) and once forcing the legacy
`initialize` handshake, so both protocol eras are exercised against rmcp.

Binary: $FUSION_BILLING_BIN, default `../../target/debug/fusion-billing` relative to
this file. The tests never build it.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import MCPError
from mcp.types import CallToolResult, TextContent

from support import connect

HERE = Path(__file__).resolve().parent
BIN = Path(os.environ.get("FUSION_BILLING_BIN") or HERE / "../../target/debug/fusion-billing").resolve()

INVALID_PARAMS = -32602

ACTIONS = {"list_invoices", "get_invoice", "charge", "refund", "export_invoices"}
FLAG_KEYS = {"isError", "errorCategory", "isRetryable", "retryAfterSeconds", "code", "severity", "explanation"}

NOT_FOUND_ENVELOPE = (
    '<tool_error code="NOT_FOUND" severity="error">\n'
    "<message>No invoice with that ID</message>\n"
    "<recovery>List invoices first, then retry with a real ID</recovery>\n"
    "<available_actions>\n"
    "  <action>billing.list_invoices</action>\n"
    "</available_actions>\n"
    "<details>\n"
    '  <detail key="requestedId">inv_2026</detail>\n'
    "</details>\n"
    "</tool_error>"
)

VALIDATION_RECOVERY = "<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>"

pytestmark = pytest.mark.anyio


def texts(result: CallToolResult) -> list[str]:
    out = []
    for block in result.content:
        assert isinstance(block, TextContent), f"expected text content, got {block!r}"
        out.append(block.text)
    return out


def fusion_flags(result: CallToolResult) -> dict[str, Any]:
    # The SDK exposes the wire `_meta` of a CallToolResult as `result.meta` (a plain dict).
    assert result.meta is not None, "CallToolResult carries no _meta"
    flags = result.meta.get("fusion/error")
    assert isinstance(flags, dict), f'_meta["fusion/error"] missing or not an object: {result.meta!r}'
    assert set(flags) <= FLAG_KEYS, f"unexpected flag keys: {set(flags) - FLAG_KEYS}"
    for key in ("isError", "errorCategory", "isRetryable", "code", "severity"):
        assert key in flags, f"flag {key} missing: {flags!r}"
    return flags


# ---------------------------------------------------------------------------------------


async def test_server_identity(mode: str) -> None:
    async with connect(BIN, mode) as client:
        info = client.server_info
        if mode == "legacy":
            assert info is not None
        if info is not None:
            assert info.name == "fusion-billing"
        print(f"negotiated protocol {client.protocol_version} (mode={mode})", file=sys.stderr)


async def test_list_tools(mode: str) -> None:
    async with connect(BIN, mode) as client:
        listing = await client.list_tools()
        tools = {t.name: t for t in listing.tools}
        assert "billing" in tools, f"tools: {sorted(tools)}"
        tool = tools["billing"]

        schema = tool.input_schema
        assert schema.get("type") == "object"
        for combinator in ("oneOf", "anyOf", "allOf"):
            assert combinator not in schema, f"top-level {combinator} in inputSchema"
        props = schema["properties"]
        assert props["action"]["type"] == "string"
        assert set(props["action"]["enum"]) == ACTIONS
        assert schema.get("required") == ["action"]
        # the union of every action's fields
        assert {"status", "id", "invoice_id", "amount_cents", "currency"} <= set(props)

        ann = tool.annotations
        assert ann is not None, "billing tool has no annotations"
        # one grouped tool with read-only, writing and destructive actions: it must not
        # advertise itself as read-only, non-destructive or idempotent
        assert ann.read_only_hint is not True
        assert ann.destructive_hint is not False
        assert ann.idempotent_hint is not True

        assert tool.meta is not None and "fusion/errors" in tool.meta, f"tool _meta: {tool.meta!r}"
        contract = json.dumps(tool.meta["fusion/errors"])
        for code in ("NOT_FOUND", "ALREADY_PAID", "AMOUNT_OVER_BALANCE", "CONFLICT"):
            assert code in contract, f'{code} not in _meta["fusion/errors"]: {contract}'


async def test_good_call(mode: str) -> None:
    async with connect(BIN, mode) as client:
        result = await client.call_tool("billing", {"action": "get_invoice", "id": "inv_0001"})
        assert result.is_error is False
        [text] = texts(result)
        assert json.loads(text) == {"id": "inv_0001", "amount_cents": 12000, "currency": "EUR", "status": "open"}
        assert result.meta is None or "fusion/error" not in result.meta


async def test_list_invoices(mode: str) -> None:
    async with connect(BIN, mode) as client:
        result = await client.call_tool("billing", {"action": "list_invoices", "status": "open"})
        assert result.is_error is False
        [text] = texts(result)
        assert [inv["id"] for inv in json.loads(text)] == ["inv_0001", "inv_0003"]


async def test_not_found_envelope_and_flags(mode: str) -> None:
    async with connect(BIN, mode) as client:
        result = await client.call_tool("billing", {"action": "get_invoice", "id": "inv_2026"})
        assert result.is_error is True
        assert texts(result) == [NOT_FOUND_ENVELOPE]
        flags = fusion_flags(result)
        assert flags["isError"] is True
        assert flags["errorCategory"] == "not_found"
        assert flags["isRetryable"] is False
        assert flags["code"] == "NOT_FOUND"
        assert flags["severity"] == "error"
        assert "retryAfterSeconds" not in flags


async def test_validation_error(mode: str) -> None:
    async with connect(BIN, mode) as client:
        result = await client.call_tool(
            "billing", {"action": "charge", "invoice_id": "nope", "amount_cents": 0, "currency": "GBP"}
        )
        assert result.is_error is True
        [text] = texts(result)
        lines = text.split("\n")
        assert lines[0] == '<validation_error action="billing.charge">'
        assert lines[-2] == VALIDATION_RECOVERY
        assert lines[-1] == "</validation_error>"
        fields = lines[1:-2]
        names = [re.match(r'<field name="([^"]+)">', line).group(1) for line in fields]  # type: ignore[union-attr]
        assert names == ["amount_cents", "currency", "invoice_id"], text
        for line in fields:
            assert re.fullmatch(r'<field name="[^"]+">.+\. You sent: .+\. Expected .+\.</field>', line), line
        by_name = dict(zip(names, fields))
        assert "You sent: 0." in by_name["amount_cents"]
        assert "You sent: 'GBP'." in by_name["currency"]
        assert "EUR" in by_name["currency"] and "USD" in by_name["currency"]
        assert "You sent: 'nope'." in by_name["invoice_id"]

        flags = fusion_flags(result)
        assert flags["code"] == "VALIDATION_ERROR"
        assert flags["errorCategory"] == "validation"
        assert flags["isRetryable"] is False
        assert flags["isError"] is True
        assert flags["severity"] == "error"


async def test_warning_next_to_result(mode: str) -> None:
    async with connect(BIN, mode) as client:
        result = await client.call_tool(
            "billing", {"action": "charge", "invoice_id": "inv_0002", "amount_cents": 5000, "currency": "USD"}
        )
        assert result.is_error is False
        blocks = texts(result)
        assert len(blocks) == 2, blocks
        assert json.loads(blocks[0])["id"] == "inv_0002"
        assert json.loads(blocks[0])["status"] == "paid"
        assert blocks[1].startswith('<tool_error code="ALREADY_PAID" severity="warning">\n')
        assert "<message>Invoice inv_0002 is already paid</message>" in blocks[1]
        assert "<recovery>No action needed; do not charge again.</recovery>" in blocks[1]
        flags = fusion_flags(result)
        assert flags["isError"] is False
        assert flags["code"] == "ALREADY_PAID"
        assert flags["severity"] == "warning"


async def test_amount_over_balance(mode: str) -> None:
    async with connect(BIN, mode) as client:
        result = await client.call_tool(
            "billing", {"action": "charge", "invoice_id": "inv_0003", "amount_cents": 5000, "currency": "EUR"}
        )
        assert result.is_error is True
        [text] = texts(result)
        assert text.startswith('<tool_error code="AMOUNT_OVER_BALANCE" severity="error">\n')
        assert "<recovery>Charge at most 990 cents for this invoice.</recovery>" in text
        assert '<detail key="balanceCents">990</detail>' in text
        flags = fusion_flags(result)
        assert flags["code"] == "AMOUNT_OVER_BALANCE"
        assert flags["errorCategory"] == "validation"
        assert flags["isRetryable"] is False


async def test_currency_conflict(mode: str) -> None:
    async with connect(BIN, mode) as client:
        result = await client.call_tool(
            "billing", {"action": "charge", "invoice_id": "inv_0001", "amount_cents": 12000, "currency": "USD"}
        )
        assert result.is_error is True
        [text] = texts(result)
        assert text.startswith('<tool_error code="CONFLICT" severity="error">\n')
        recovery = re.search(r"<recovery>(.*)</recovery>", text)
        assert recovery is not None and "EUR" in recovery.group(1), text
        assert fusion_flags(result)["code"] == "CONFLICT"
        # the failed charge changed nothing
        after = await client.call_tool("billing", {"action": "get_invoice", "id": "inv_0001"})
        assert json.loads(texts(after)[0])["status"] == "open"


async def test_internal_error_leaks_nothing(mode: str) -> None:
    async with connect(BIN, mode) as client:
        result = await client.call_tool("billing", {"action": "refund", "invoice_id": "inv_0003", "amount_cents": 100})
        assert result.is_error is True
        wire = result.model_dump_json(by_alias=True)
        for secret in ("postgres://", "hunter2", "10.0.0.9"):
            assert secret not in wire, f"{secret!r} leaked to the client: {wire}"
        [text] = texts(result)
        assert text.startswith('<tool_error code="INTERNAL_ERROR" severity="error">\n')
        assert '<detail key="errorId">' in text
        flags = fusion_flags(result)
        assert flags["code"] == "INTERNAL_ERROR"
        assert flags["errorCategory"] == "unknown"
        assert flags["isRetryable"] is False


async def test_unknown_tool_is_protocol_error(mode: str) -> None:
    async with connect(BIN, mode) as client:
        with pytest.raises(MCPError) as excinfo:
            await client.call_tool("no_such_tool", {"action": "list_invoices"})
        assert excinfo.value.code == INVALID_PARAMS
        # the session is still usable afterwards
        again = await client.call_tool("billing", {"action": "get_invoice", "id": "inv_0001"})
        assert again.is_error is False
