"""Real-client interoperability tests: the official Python MCP SDK against `fusion-composed`.

`fusion-composed` is one server with a fusion tool (`notes`), an rmcp prompt (`summarize`) and
rmcp resources (`note://TITLE`), composed with `Server::handler`. Spawned over stdio, one fresh
process per test; every test runs in both connect modes (`auto`: the 2026-07-28 era when the
server offers it; `legacy`: the `initialize` handshake).

Binary: $FUSION_COMPOSED_BIN, default `../../target/debug/fusion-composed` relative to this
file. The tests never build it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp import MCPError
from mcp.types import CallToolResult, TextContent

from support import connect

HERE = Path(__file__).resolve().parent
BIN = Path(os.environ.get("FUSION_COMPOSED_BIN") or HERE / "../../target/debug/fusion-composed").resolve()

pytestmark = pytest.mark.anyio


def text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent), f"expected text content, got {block!r}"
    return block.text


async def test_tools_prompts_and_resources_are_listed(mode: str) -> None:
    async with connect(BIN, mode) as client:
        tools = await client.list_tools()
        assert [t.name for t in tools.tools] == ["notes"]
        prompts = await client.list_prompts()
        assert [p.name for p in prompts.prompts] == ["summarize"]
        [argument] = prompts.prompts[0].arguments or []
        assert argument.name == "title" and argument.required is True
        resources = await client.list_resources()
        assert [str(r.uri) for r in resources.resources] == ["note://welcome"]


async def test_prompt_and_resource_are_fetched(mode: str) -> None:
    async with connect(BIN, mode) as client:
        prompt = await client.get_prompt("summarize", {"title": "welcome"})
        content = prompt.messages[0].content
        assert isinstance(content, TextContent)
        assert "fusion serves the tools" in content.text
        read = await client.read_resource("note://welcome")
        assert read.contents[0].text == "fusion serves the tools, rmcp the prompts and resources."  # type: ignore[union-attr]


async def test_the_tool_writes_what_the_resources_read(mode: str) -> None:
    async with connect(BIN, mode) as client:
        result = await client.call_tool("notes", {"action": "add", "title": "todo", "text": "ship it"})
        assert result.is_error is False
        assert text(result) == "Saved as note://todo."
        read = await client.read_resource("note://todo")
        assert read.contents[0].text == "ship it"  # type: ignore[union-attr]


async def test_bad_arguments_get_the_validation_envelope(mode: str) -> None:
    async with connect(BIN, mode) as client:
        result = await client.call_tool("notes", {"action": "add", "title": ""})
        assert result.is_error is True
        lines = text(result).split("\n")
        assert lines[0] == '<validation_error action="notes.add">'
        assert lines[1].startswith('<field name="text">Missing required field.')
        assert lines[2].startswith('<field name="title">Too short.')
        assert result.meta is not None
        assert result.meta["fusion/error"]["code"] == "VALIDATION_ERROR"


async def test_an_unknown_resource_is_a_json_rpc_error(mode: str) -> None:
    async with connect(BIN, mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource("note://nope")
        assert "No resource note://nope." in str(raised.value)


async def test_progress_reaches_the_client(mode: str) -> None:
    reports: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    async with connect(BIN, mode) as client:
        await client.call_tool("notes", {"action": "add", "title": "b", "text": "two words"})
        result = await client.call_tool("notes", {"action": "count_words"}, progress_callback=on_progress)
        assert text(result) == "11"
    assert reports == [(1.0, 2.0, "counting"), (2.0, 2.0, "counting")]
