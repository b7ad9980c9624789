"""The billing example's `refund` asks the user to confirm through MCP elicitation.

With the Python SDK's elicitation callback (the legacy `initialize` handshake, where the
client declares the `elicitation` capability), the server asks and the callback answers for
the user. Without one (and in the stateless 2026-07-28 era, which forbids server-to-client
requests), the call answers CONFIRMATION_UNAVAILABLE: the model cannot confirm for the user,
and the refund is not done.

Binary: $FUSION_BILLING_BIN, as for test_billing.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult

from support import connect
from test_billing import BIN, fusion_flags, texts

pytestmark = pytest.mark.anyio

REFUND = {"action": "refund", "invoice_id": "inv_0002", "amount_cents": 100}


async def status(client: Client) -> str:
    result = await client.call_tool("billing", {"action": "get_invoice", "id": "inv_0002"})
    return json.loads(texts(result)[0])["status"]


def user(answer: str, asked: list[str]):
    async def callback(context: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        content = {"confirm": True} if answer == "accept" else None
        return ElicitResult(action=answer, content=content)

    return callback


async def test_the_user_confirms_through_the_elicitation_callback() -> None:
    asked: list[str] = []
    async with connect(BIN, "legacy", elicitation_callback=user("accept", asked)) as client:
        result = await client.call_tool("billing", REFUND)
        assert result.is_error is False, texts(result)
        assert asked == ["Refund 100 cents on invoice inv_0002?"]
        assert await status(client) == "open"


async def test_a_declining_user_stops_the_refund() -> None:
    asked: list[str] = []
    async with connect(BIN, "legacy", elicitation_callback=user("decline", asked)) as client:
        result = await client.call_tool("billing", REFUND)
        assert result.is_error is True
        assert fusion_flags(result)["code"] == "USER_DECLINED"
        assert fusion_flags(result)["errorCategory"] == "validation"
        assert len(asked) == 1
        assert await status(client) == "paid"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_without_elicitation_the_refund_is_not_done(mode: str) -> None:
    async with connect(BIN, mode) as client:
        result = await client.call_tool("billing", REFUND)
        assert result.is_error is True
        flags = fusion_flags(result)
        assert flags["code"] == "CONFIRMATION_UNAVAILABLE"
        assert flags["errorCategory"] == "auth"
        assert flags["isRetryable"] is False
        [envelope] = texts(result)
        assert "Do not call again" in envelope
        assert await status(client) == "paid"

        # The model cannot claim the user agreed: `refund` takes no such argument.
        claimed = await client.call_tool("billing", {**REFUND, "confirmed": True})
        assert fusion_flags(claimed)["code"] == "VALIDATION_ERROR", texts(claimed)
        assert await status(client) == "paid"
