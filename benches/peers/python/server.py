"""The peer comparison's FastMCP server (benches/peers/run.sh): `get_invoice` over Streamable
HTTP on 127.0.0.1:PORT/mcp, FastMCP's defaults (sessions, event-stream answers) but for the
startup banner and uvicorn's access log (one log line per request is not the server's work).

usage: server.py PORT
"""

import sys

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from pydantic import BaseModel

mcp = FastMCP("peer-fastmcp")


class Invoice(BaseModel):
    id: str
    customer: str
    amount_cents: int
    currency: str
    status: str


@mcp.tool(annotations={"readOnlyHint": True})
async def get_invoice(id: str) -> Invoice:
    """Reads one invoice by its id. Only `inv_1` exists."""
    if id != "inv_1":
        raise ToolError(f"No invoice with id {id}")
    return Invoice(id="inv_1", customer="cus_1", amount_cents=1250, currency="EUR", status="paid")


if __name__ == "__main__":
    mcp.run(
        transport="http",
        host="127.0.0.1",
        port=int(sys.argv[1]),
        path="/mcp",
        show_banner=False,
        log_level="warning",
        uvicorn_config={"access_log": False},
    )
