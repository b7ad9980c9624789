"""The billing example's `export_invoices` as a task (MCP Tasks extension,
`io.modelcontextprotocol/tasks`), with the Python SDK as a 2026-07-28 client.

The SDK (mcp 2.3) has no tasks extension of its own: its task types are those of the
2025-11-25 revision's experimental tasks. It has a generic client extension API (SEP-2133):
`TasksExtension` below declares the extension (the SDK then names it in every request's
`_meta` client capabilities), claims the `resultType: "task"` answer of `tools/call`, and
resolves it by polling `tasks/get` every `pollIntervalMs`, sent with the SDK's lowest-level
typed request API (`ClientSession.send_request`). `client.call_tool` then returns the task's
result transparently; `client.session.call_tool(..., allow_claimed=True)` returns the
`CreateTaskResult` itself, for the tests that poll and cancel by hand.

Over stdio and over Streamable HTTP (bearer tokens: a task belongs to its token's subject).
Binary: $FUSION_BILLING_BIN, as for test_billing.py.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Literal

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client, MCPError
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from pydantic import TypeAdapter

from support import connect
from test_billing import BIN, INVALID_PARAMS, fusion_flags, texts
from test_billing_http import billing_http_tokens  # noqa: F401 (a fixture)

pytestmark = pytest.mark.anyio

TASKS = "io.modelcontextprotocol/tasks"
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
TERMINAL = {"completed", "failed", "cancelled"}

EXPORT_CSV = {"action": "export_invoices", "format": "csv", "delay_ms": 1000}
SLOW_EXPORT = {"action": "export_invoices", "format": "json", "delay_ms": 60000}
CSV = (
    "id,amount_cents,currency,status\n"
    "inv_0001,12000,EUR,open\n"
    "inv_0002,5000,USD,paid\n"
    "inv_0003,990,EUR,open\n"
)


# --- the extension, on the SDK's extension API ------------------------------------------------


class CreateTaskResult(types.Result):
    """A `tools/call` answered with a task (`resultType: "task"`)."""

    result_type: Literal["task"]
    task_id: str
    status: str
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None
    status_message: str | None = None


class TaskParams(types.RequestParams):
    task_id: str


class GetTask(types.Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    # Over Streamable HTTP, `tasks/*` carry the task id in the `Mcp-Name` header too.
    name_param = "taskId"


class CancelTask(types.Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskParams
    name_param = "taskId"


RAW = TypeAdapter(dict[str, Any])


async def get_task(session: ClientSession, task_id: str) -> dict[str, Any]:
    """`tasks/get`: the task as the server sent it (a JSON object)."""
    return await session.send_request(GetTask(params=TaskParams(task_id=task_id)), RAW)


async def cancel_task(session: ClientSession, task_id: str) -> dict[str, Any]:
    """`tasks/cancel`: the acknowledgement."""
    return await session.send_request(CancelTask(params=TaskParams(task_id=task_id)), RAW)


async def settled(session: ClientSession, created: CreateTaskResult, seen: list[str] | None = None) -> dict[str, Any]:
    """Polls `tasks/get` every `pollIntervalMs` until the task is completed, failed or cancelled."""
    with anyio.fail_after(30):
        while True:
            task = await get_task(session, created.task_id)
            if seen is not None:
                seen.append(task["status"])
            if task["status"] in TERMINAL:
                return task
            await anyio.sleep((created.poll_interval_ms or 1000) / 1000)


async def resolve(created: CreateTaskResult, ctx: ClaimContext) -> types.CallToolResult:
    task = await settled(ctx.session, created)
    if task["status"] != "completed":
        raise MCPError(task.get("error", {}).get("code", -32603), f"the task ended {task['status']}")
    return types.CallToolResult.model_validate(task["result"])


class TasksExtension(ClientExtension):
    identifier = TASKS

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=resolve)]


# --- clients ----------------------------------------------------------------------------------


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return request.param


@asynccontextmanager
async def modern(
    transport: str, request: pytest.FixtureRequest, tasks: bool = True, token: str = "BILLING_TOKEN"
) -> AsyncIterator[Client]:
    """A 2026-07-28 client of fusion-billing over `transport`, declaring the tasks extension or
    not. Over HTTP every client of one test reaches the same server, with the token `token`."""
    extensions = [TasksExtension()] if tasks else []
    if transport == "stdio":
        async with connect(BIN, "auto", extensions=extensions) as client:
            yield client
        return
    url, tokens = request.getfixturevalue("billing_http_tokens")
    headers = {"Authorization": f"Bearer {tokens[token]}"}
    async with httpx2.AsyncClient(headers=headers, timeout=20) as http:
        transport_ = streamable_http_client(url, http_client=http)
        async with Client(transport_, mode="auto", extensions=extensions) as client:
            yield client


async def start(client: Client, arguments: dict[str, Any]) -> CreateTaskResult:
    created = await client.session.call_tool("billing", arguments, allow_claimed=True)
    assert isinstance(created, CreateTaskResult), created
    return created


# --- tests ------------------------------------------------------------------------------------


async def test_an_export_runs_as_a_task_and_completes_with_the_direct_calls_result(
    transport: str, request: pytest.FixtureRequest
) -> None:
    async with modern(transport, request) as client:
        assert client.protocol_version == "2026-07-28"
        assert TASKS in (client.session.server_capabilities.extensions or {})
        created = await start(client, EXPORT_CSV)
        assert (created.status, created.poll_interval_ms, created.ttl_ms) == ("working", 500, 3_600_000)
        assert len(created.task_id) == 32, created.task_id
        seen: list[str] = []
        task = await settled(client.session, created, seen)
        assert task["status"] == "completed", task
        assert seen[0] == "working" and seen[-1] == "completed", seen
        assert (task["taskId"], task["resultType"]) == (created.task_id, "complete")
        result = types.CallToolResult.model_validate(task["result"])
        assert result.is_error is False and texts(result) == [CSV]

        # Fetched twice: the same result.
        assert (await get_task(client.session, created.task_id))["result"] == task["result"]
        # The SDK's own `call_tool`, with the extension's claim: the task's result, transparently.
        assert await client.call_tool("billing", EXPORT_CSV) == result

    # A client without the extension is answered directly, with the same result.
    async with modern(transport, request, tasks=False) as plain:
        direct = await plain.call_tool("billing", EXPORT_CSV)
        assert direct == result
        assert direct.model_dump(by_alias=True, exclude_none=True, mode="json") == task["result"]


async def test_a_call_refused_before_it_runs_is_answered_directly_not_as_a_task(
    transport: str, request: pytest.FixtureRequest
) -> None:
    async with modern(transport, request) as client:
        for arguments, code in (
            ({**EXPORT_CSV, "delay_ms": 60001}, "VALIDATION_ERROR"),
            ({"action": "export_invoices", "format": "xml"}, "VALIDATION_ERROR"),
            ({"action": "export_invoice", "format": "csv"}, "UNKNOWN_ACTION"),
        ):
            refused = await client.session.call_tool("billing", arguments, allow_claimed=True)
            assert isinstance(refused, types.CallToolResult), (arguments, refused)
            assert refused.is_error is True
            assert fusion_flags(refused)["code"] == code, texts(refused)
        # Not an action that runs as a task: a direct answer to a client of the extension.
        listed = await client.session.call_tool("billing", {"action": "list_invoices"}, allow_claimed=True)
        assert isinstance(listed, types.CallToolResult) and listed.is_error is False


async def test_a_slow_export_is_cancelled(transport: str, request: pytest.FixtureRequest) -> None:
    async with modern(transport, request) as client:
        created = await start(client, SLOW_EXPORT)
        assert (await cancel_task(client.session, created.task_id)).get("resultType", "complete") == "complete"
        task = await settled(client.session, created)
        assert task["status"] == "cancelled", task
        assert "result" not in task
        # Cancelling a settled task is acknowledged and changes nothing.
        await cancel_task(client.session, created.task_id)
        assert (await get_task(client.session, created.task_id))["status"] == "cancelled"


async def rpc_error(call: Any) -> MCPError:
    with pytest.raises(MCPError) as caught:
        await call
    return caught.value


async def test_an_unknown_task_and_another_callers_task_get_the_same_error(request: pytest.FixtureRequest) -> None:
    unknown = "0123456789abcdef0123456789abcdef"
    async with modern("http", request) as payer, modern("http", request, token="BILLING_TOKEN_READ_ONLY") as viewer:
        created = await start(payer, EXPORT_CSV)
        missing = await rpc_error(get_task(viewer.session, unknown))
        theirs = await rpc_error(get_task(viewer.session, created.task_id))
        assert missing.code == theirs.code == INVALID_PARAMS
        assert missing.message.replace(unknown, "ID") == theirs.message.replace(created.task_id, "ID"), (
            missing.message,
            theirs.message,
        )
        assert missing.error.data == theirs.error.data
        # Nor may the other caller cancel it: the same error, and the task runs on.
        cancelled = await rpc_error(cancel_task(viewer.session, created.task_id))
        assert cancelled.code == INVALID_PARAMS
        assert (await settled(payer.session, created))["status"] == "completed"
        # Its owner sees an unknown id as the other caller did.
        assert (await rpc_error(get_task(payer.session, unknown))).code == INVALID_PARAMS

    # `tasks/*` from a client that does not declare the extension.
    async with modern("http", request, tasks=False) as plain:
        refused = await rpc_error(get_task(plain.session, created.task_id))
        assert refused.code == MISSING_REQUIRED_CLIENT_CAPABILITY, refused


async def test_an_unknown_task_over_stdio(request: pytest.FixtureRequest) -> None:
    async with modern("stdio", request) as client:
        error = await rpc_error(get_task(client.session, "nope"))
        assert error.code == INVALID_PARAMS
        error = await rpc_error(cancel_task(client.session, "nope"))
        assert error.code == INVALID_PARAMS
