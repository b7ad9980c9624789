"""The billing example against a real OpenID provider, as the auth guide walks through it.

Starts oidc-provider (provider.mjs) and `fusion-billing --http ADDR --issuer ISSUER
--introspection-client mcp-server:server-secret` on free loopback ports, mints a JWT access token
and an opaque one for the billing endpoint (client credentials, RFC 8707 resource), and calls
`charge` with each over Streamable HTTP (MCP 2026-07-28, one request, no session): both are
accepted, a request without a token gets 401 naming the resource metadata.

    python3 clients/oidc/billing_smoke.py PATH/TO/fusion-billing
"""

import base64
import json
import socket
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROTOCOL = "2026-07-28"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(process, stream, marker, what):
    """Reads `stream` line by line until one holds `marker`; fails if the process ends first."""
    for line in stream:
        if marker in line:
            return line
    raise SystemExit(f"billing_smoke: {what} stopped before saying '{marker}' (exit {process.wait()})")


def mint(issuer, resource):
    """An access token of client mcp-client for `resource`, scope charge."""
    body = urllib.parse.urlencode(
        {"grant_type": "client_credentials", "scope": "charge", "resource": resource}
    ).encode()
    request = urllib.request.Request(f"{issuer}/token", data=body)
    basic = base64.b64encode(b"mcp-client:client-secret").decode()
    request.add_header("Authorization", f"Basic {basic}")
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)["access_token"]


def call(endpoint, token, arguments):
    """`tools/call billing`: the HTTP status and the JSON-RPC message, or the error's headers."""
    message = {
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "name": "billing", "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": PROTOCOL,
                "io.modelcontextprotocol/clientInfo": {"name": "billing_smoke", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    request = urllib.request.Request(endpoint, data=json.dumps(message).encode())
    for name, value in {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "billing",
    }.items():
        request.add_header(name, value)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            text = answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers)
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    messages = [json.loads(d) for d in data if d.startswith("{")] or [json.loads(text)]
    return 200, messages[-1]


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    billing = sys.argv[1]
    provider_port, billing_port = free_port(), free_port()
    issuer = f"http://127.0.0.1:{provider_port}"
    endpoint = f"http://127.0.0.1:{billing_port}/mcp"
    processes = []
    try:
        with tempfile.TemporaryDirectory() as state:
            provider = subprocess.Popen(
                ["node", "provider.mjs", str(provider_port), state],
                cwd=HERE, stdout=subprocess.PIPE, text=True,
            )
            processes.append(provider)
            wait_for(provider, provider.stdout, "listening", "oidc-provider")
            server = subprocess.Popen(
                [billing, "--http", f"127.0.0.1:{billing_port}", "--issuer", issuer,
                 "--introspection-client", "mcp-server:server-secret"],
                stderr=subprocess.PIPE, text=True,
            )
            processes.append(server)
            wait_for(server, server.stderr, f"bearer tokens of {issuer} required", "fusion-billing")

            charge = {"action": "charge", "invoice_id": "inv_0001", "amount_cents": 100,
                      "currency": "EUR"}
            for kind, resource in [("JWT", endpoint), ("opaque", f"{endpoint}?format=opaque")]:
                token = mint(issuer, resource)
                status, message = call(endpoint, token, charge)
                result = message.get("result", {}) if status == 200 else {}
                if status != 200 or result.get("isError") is not False:
                    raise SystemExit(f"billing_smoke: the {kind} token's charge: {status} {message}")
                print(f"billing_smoke: {kind} token accepted, charge answered: "
                      f"{result['content'][0]['text'][:60]}")
            status, headers = call(endpoint, None, charge)
            challenge = headers.get("WWW-Authenticate", headers.get("www-authenticate", ""))
            if status != 401 or "resource_metadata=" not in challenge:
                raise SystemExit(f"billing_smoke: no token: {status} {headers}")
            print("billing_smoke: no token: 401 with the resource metadata challenge")
    finally:
        for process in processes:
            process.terminate()
            process.wait()


if __name__ == "__main__":
    main()
