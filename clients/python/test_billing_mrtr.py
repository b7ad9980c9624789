"""The billing example's `refund` confirmation for clients of the stateless 2026-07-28 revision,
which forbids server-to-client requests: multi round-trip requests (MRTR, SEP-2322).

A client that declares elicitation gets `input_required` (the question, and a sealed
`requestState`); it asks its user and calls again with the answer. The SDK drives the rounds
with its elicitation callback. Driven by hand (`allow_input_required=True`), a forged state, a
state sent for other arguments, and a state sent a second time are each refused (JSON-RPC
-32602, `data.code` REQUEST_STATE_INVALID), never taken as the user's answer, and a yes sent
without a state is not taken either (the user is asked): the refund is not done.

Over stdio and over Streamable HTTP (with the development token that holds the `refund`
scope). Binary: $FUSION_BILLING_BIN, as for test_billing.py.
"""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import httpx2
import mcp_types as types
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client

from support import connect
from test_billing import BIN, INVALID_PARAMS, fusion_flags, texts
from test_billing_elicitation import REFUND, status, user
from test_billing_http import billing_http, billing_http_tokens  # noqa: F401 (fixtures)

pytestmark = pytest.mark.anyio

ACCEPT = {"q0": {"action": "accept", "content": {"confirm": True}}}


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return request.param


@asynccontextmanager
async def modern(transport: str, request: pytest.FixtureRequest, **options: Any) -> AsyncIterator[Client]:
    """A 2026-07-28 client of fusion-billing over `transport`."""
    if transport == "stdio":
        async with connect(BIN, "auto", **options) as client:
            yield client
        return
    url, token = request.getfixturevalue("billing_http")
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=20) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="auto", **options) as client:
            yield client


async def test_the_user_confirms_in_a_second_round(transport: str, request: pytest.FixtureRequest) -> None:
    asked: list[str] = []
    async with modern(transport, request, elicitation_callback=user("accept", asked)) as client:
        assert client.protocol_version == "2026-07-28"
        result = await client.call_tool("billing", REFUND)
        assert result.is_error is False, texts(result)
        assert asked == ["Refund 100 cents on invoice inv_0002?"]
        assert await status(client) == "open"


async def test_a_declining_user_stops_the_refund(transport: str, request: pytest.FixtureRequest) -> None:
    asked: list[str] = []
    async with modern(transport, request, elicitation_callback=user("decline", asked)) as client:
        result = await client.call_tool("billing", REFUND)
        assert fusion_flags(result)["code"] == "USER_DECLINED", texts(result)
        assert len(asked) == 1
        assert await status(client) == "paid"


async def test_a_forged_another_calls_or_a_used_state_is_refused(
    transport: str, request: pytest.FixtureRequest
) -> None:
    async with modern(transport, request, elicitation_callback=user("accept", [])) as client:
        session = client.session
        first = await session.call_tool("billing", REFUND, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult), first
        [(key, question)] = first.input_requests.items()
        assert key == "q0"
        assert question.params.message == "Refund 100 cents on invoice inv_0002?"
        state = first.request_state

        async def again(arguments: dict, sent_state: str | None, responses: Any = ACCEPT) -> Any:
            return await session.call_tool(
                "billing", arguments, input_responses=responses, request_state=sent_state, allow_input_required=True
            )

        async def refused(call: Any) -> None:
            with pytest.raises(MCPError) as caught:
                await call
            assert caught.value.code == INVALID_PARAMS
            assert caught.value.error.data["code"] == "REQUEST_STATE_INVALID"

        await refused(again(REFUND, state[:-4] + "AAAA"))  # forged
        await refused(again({**REFUND, "amount_cents": 200}, state))  # another call's
        # A yes sent without a state is not the user's answer: the user is asked.
        ahead = await again(REFUND, None)
        assert isinstance(ahead, types.InputRequiredResult), ahead
        assert await status(client) == "paid"

        done = await again(REFUND, state)
        assert isinstance(done, types.CallToolResult) and done.is_error is False, texts(done)
        assert await status(client) == "open"
        await refused(again(REFUND, state))  # replayed
        assert json.loads(texts(await client.call_tool("billing", {"action": "get_invoice", "id": "inv_0002"}))[0])["status"] == "open"
