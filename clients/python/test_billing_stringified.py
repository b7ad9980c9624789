"""The official Python MCP SDK sending an argument as a string holding JSON, as some clients do
for numbers, arrays and objects: `fusion-billing` reads `"amount_cents": "1000"` as the number
its schema wants, says so in `_meta["fusion/decoded"]` and in a warning, and never parses a
string argument, whatever it looks like.

Binary: $FUSION_BILLING_BIN, as in test_billing.py. The tests never build it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mcp.types import CallToolResult, TextContent

from support import connect

HERE = Path(__file__).resolve().parent
BIN = Path(os.environ.get("FUSION_BILLING_BIN") or HERE / "../../target/debug/fusion-billing").resolve()

pytestmark = pytest.mark.anyio

WARNING = (
    '<tool_error code="VALIDATION_ERROR" severity="warning">\n'
    "<message>The argument 'amount_cents' was sent as a string holding JSON; it was read as the "
    "integer in that string.</message>\n"
    "<recovery>Send 'amount_cents' as an integer itself, not as a string, in later calls.</recovery>\n"
    "</tool_error>"
)


def texts(result: CallToolResult) -> list[str]:
    out = []
    for block in result.content:
        assert isinstance(block, TextContent), f"expected text content, got {block!r}"
        out.append(block.text)
    return out


async def test_a_number_sent_as_a_string_is_read_as_the_number(mode: str) -> None:
    async with connect(BIN, mode) as client:
        sent = {"action": "charge", "invoice_id": "inv_0001", "amount_cents": "1000", "currency": "EUR"}
        result = await client.call_tool("billing", sent)
        assert result.is_error is False
        blocks = texts(result)
        assert json.loads(blocks[0]) == {"id": "inv_0001", "amount_cents": 12000, "currency": "EUR", "status": "open"}
        assert blocks[1:] == [WARNING]
        assert result.meta is not None
        assert result.meta["fusion/decoded"] == ["amount_cents"]
        assert result.meta["fusion/error"]["isError"] is False
        assert result.meta["fusion/error"]["severity"] == "warning"

        again = await client.call_tool("billing", sent)
        assert again.is_error is False
        assert again.meta is not None and again.meta["fusion/decoded"] == ["amount_cents"]
        if mode == "legacy":
            # One session (the initialize handshake): told once.
            assert len(texts(again)) == 1, texts(again)
            assert "fusion/error" not in again.meta


async def test_a_string_argument_that_looks_like_json_is_left_alone(mode: str) -> None:
    async with connect(BIN, mode) as client:
        result = await client.call_tool("billing", {"action": "get_invoice", "id": "[1, 2]"})
        assert result.is_error is True
        [text] = texts(result)
        assert "You sent: '[1, 2]'." in text, text
        assert result.meta is not None and "fusion/decoded" not in result.meta


async def test_json_of_the_wrong_type_is_refused_as_sent(mode: str) -> None:
    async with connect(BIN, mode) as client:
        sent = {"action": "charge", "invoice_id": "inv_0001", "amount_cents": "[1000]", "currency": "EUR"}
        result = await client.call_tool("billing", sent)
        assert result.is_error is True
        [text] = texts(result)
        assert "<field name=\"amount_cents\">Wrong type. You sent: '[1000]'." in text, text
        assert "fusion/decoded" not in (result.meta or {})
