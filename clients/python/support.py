"""Helpers shared by the client tests (a plain module: pytest discourages importing conftest)."""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import pytest
from mcp import Client, StdioServerParameters


@asynccontextmanager
async def connect(binary: Path, mode: str, **options: Any) -> AsyncIterator[Client]:
    """Spawn `binary` over stdio (a fresh process) and connect in `mode`; `options` go to `Client`."""
    if not binary.is_file():
        pytest.fail(f"{binary.name} binary not found at {binary} (build it: cargo build -p examples --bin {binary.name})")
    params = StdioServerParameters(command=str(binary), args=[], env={"RUST_LOG": "warn"})
    async with Client(params, mode=mode, read_timeout_seconds=20, **options) as client:
        yield client
