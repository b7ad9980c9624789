// Real-client interoperability tests: the official TypeScript MCP SDK over Streamable HTTP
// against `fusion-billing --http 127.0.0.1:<port>`.
//
// Binary: $FUSION_BILLING_BIN, default ../../target/debug/fusion-billing relative to this file.
// Its HTTP mode takes bearer tokens: the client sends the development token with the `charge`
// scope that the server prints at start (`export BILLING_TOKEN=...` on stderr).
// The tests never build it. Every call here leaves the server's in-memory state as seeded
// (no successful charge or refund), so one server process serves every test.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

import { startServer, stopServer, waitForToken } from './helpers.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.resolve(process.env.FUSION_BILLING_BIN || path.join(here, '../../target/debug/fusion-billing'));

const ACTIONS = ['list_invoices', 'get_invoice', 'charge', 'refund', 'export_invoices'];
const FLAG_KEYS = new Set(['isError', 'errorCategory', 'isRetryable', 'retryAfterSeconds', 'code', 'severity', 'explanation']);

const NOT_FOUND_ENVELOPE =
  '<tool_error code="NOT_FOUND" severity="error">\n' +
  '<message>No invoice with that ID</message>\n' +
  '<recovery>List invoices first, then retry with a real ID</recovery>\n' +
  '<available_actions>\n' +
  '  <action>billing.list_invoices</action>\n' +
  '</available_actions>\n' +
  '<details>\n' +
  '  <detail key="requestedId">inv_2026</detail>\n' +
  '</details>\n' +
  '</tool_error>';

const VALIDATION_RECOVERY =
  '<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>';

let server;
let client;
let url;
let token;

function texts(result) {
  return result.content.map((block) => {
    assert.equal(block.type, 'text', `expected text content, got ${JSON.stringify(block)}`);
    return block.text;
  });
}

function fusionFlags(result) {
  assert.ok(result._meta, `CallToolResult carries no _meta: ${JSON.stringify(result)}`);
  const flags = result._meta['fusion/error'];
  assert.equal(typeof flags, 'object', `_meta["fusion/error"] missing: ${JSON.stringify(result._meta)}`);
  for (const key of Object.keys(flags)) assert.ok(FLAG_KEYS.has(key), `unexpected flag key ${key}`);
  for (const key of ['isError', 'errorCategory', 'isRetryable', 'code', 'severity']) {
    assert.ok(key in flags, `flag ${key} missing: ${JSON.stringify(flags)}`);
  }
  return flags;
}

async function newClient() {
  const c = new Client({ name: 'fusion-interop-ts', version: '0.0.0' });
  const requestInit = { headers: { Authorization: `Bearer ${token}` } };
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }));
  return c;
}

before(async () => {
  server = await startServer(BIN, 'fusion-billing');
  url = server.url;
  token = await waitForToken(server, 20000);
  client = await newClient();
});

after(async () => {
  await stopServer(server, client);
});

test('server identifies itself as fusion-billing', () => {
  assert.equal(client.getServerVersion()?.name, 'fusion-billing');
});

test('tools/list: billing tool, flat schema, annotations, error contract', async () => {
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === 'billing');
  assert.ok(tool, `tools: ${tools.map((t) => t.name)}`);

  const schema = tool.inputSchema;
  assert.equal(schema.type, 'object');
  for (const combinator of ['oneOf', 'anyOf', 'allOf']) {
    assert.ok(!(combinator in schema), `top-level ${combinator} in inputSchema`);
  }
  assert.equal(schema.properties.action.type, 'string');
  assert.deepEqual([...schema.properties.action.enum].sort(), [...ACTIONS].sort());
  assert.deepEqual(schema.required, ['action']);
  for (const field of ['status', 'id', 'invoice_id', 'amount_cents', 'currency']) {
    assert.ok(field in schema.properties, `field ${field} missing from the union schema`);
  }

  assert.ok(tool.annotations, 'billing tool has no annotations');
  assert.notEqual(tool.annotations.readOnlyHint, true);
  assert.notEqual(tool.annotations.destructiveHint, false);
  assert.notEqual(tool.annotations.idempotentHint, true);

  assert.ok(tool._meta && 'fusion/errors' in tool._meta, `tool _meta: ${JSON.stringify(tool._meta)}`);
  const contract = JSON.stringify(tool._meta['fusion/errors']);
  for (const code of ['NOT_FOUND', 'ALREADY_PAID', 'AMOUNT_OVER_BALANCE', 'CONFLICT']) {
    assert.ok(contract.includes(code), `${code} not in _meta["fusion/errors"]: ${contract}`);
  }
});

// The `ledger` tool's one action declares an output schema. The SDK validates the
// structuredContent of successes against it (and throws when it is missing); an error result
// of that tool must come through as a normal isError result, not a client-side rejection.
test('output schema: success carries valid structuredContent', async () => {
  const { tools } = await client.listTools();
  const ledger = tools.find((t) => t.name === 'ledger');
  assert.ok(ledger, `tools: ${tools.map((t) => t.name)}`);
  assert.equal(ledger.outputSchema.type, 'object');
  const result = await client.callTool({ name: 'ledger', arguments: { id: 'inv_0001' } });
  assert.equal(result.isError, false);
  assert.deepEqual(result.structuredContent, { id: 'inv_0001', currency: 'EUR', balance_cents: 12000 });
  assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
});

test('output schema: an error result is not rejected by the client', async () => {
  const result = await client.callTool({ name: 'ledger', arguments: { id: 'inv_2026' } });
  assert.equal(result.isError, true);
  assert.equal(result.structuredContent, undefined);
  assert.ok(result.content[0].text.startsWith('<tool_error code="NOT_FOUND" severity="error">'), result.content[0].text);
  assert.equal(result._meta['fusion/error'].code, 'NOT_FOUND');
});

test('good call: get_invoice inv_0001', async () => {
  const result = await client.callTool({ name: 'billing', arguments: { action: 'get_invoice', id: 'inv_0001' } });
  assert.equal(result.isError ?? false, false);
  const [text, ...rest] = texts(result);
  assert.equal(rest.length, 0);
  assert.deepEqual(JSON.parse(text), { id: 'inv_0001', amount_cents: 12000, currency: 'EUR', status: 'open' });
  assert.ok(!result._meta || !('fusion/error' in result._meta));
});

test('not found: byte-exact envelope and typed flags', async () => {
  const result = await client.callTool({ name: 'billing', arguments: { action: 'get_invoice', id: 'inv_2026' } });
  assert.equal(result.isError, true);
  assert.deepEqual(texts(result), [NOT_FOUND_ENVELOPE]);
  const flags = fusionFlags(result);
  assert.equal(flags.isError, true);
  assert.equal(flags.errorCategory, 'not_found');
  assert.equal(flags.isRetryable, false);
  assert.equal(flags.code, 'NOT_FOUND');
  assert.equal(flags.severity, 'error');
  assert.ok(!('retryAfterSeconds' in flags));
});

test('validation error: every field in one envelope', async () => {
  const result = await client.callTool({
    name: 'billing',
    arguments: { action: 'charge', invoice_id: 'nope', amount_cents: 0, currency: 'GBP' },
  });
  assert.equal(result.isError, true);
  const [text, ...rest] = texts(result);
  assert.equal(rest.length, 0);
  const lines = text.split('\n');
  assert.equal(lines[0], '<validation_error action="billing.charge">');
  assert.equal(lines.at(-2), VALIDATION_RECOVERY);
  assert.equal(lines.at(-1), '</validation_error>');
  const fields = lines.slice(1, -2);
  const names = fields.map((l) => /^<field name="([^"]+)">/.exec(l)?.[1]);
  assert.deepEqual(names, ['amount_cents', 'currency', 'invoice_id'], text);
  for (const line of fields) {
    assert.match(line, /^<field name="[^"]+">.+\. You sent: .+\. Expected .+\.<\/field>$/);
  }
  const byName = Object.fromEntries(names.map((n, i) => [n, fields[i]]));
  assert.ok(byName.amount_cents.includes('You sent: 0.'), byName.amount_cents);
  assert.ok(byName.currency.includes("You sent: 'GBP'."), byName.currency);
  assert.ok(byName.currency.includes('EUR') && byName.currency.includes('USD'), byName.currency);
  assert.ok(byName.invoice_id.includes("You sent: 'nope'."), byName.invoice_id);

  const flags = fusionFlags(result);
  assert.equal(flags.code, 'VALIDATION_ERROR');
  assert.equal(flags.errorCategory, 'validation');
  assert.equal(flags.isRetryable, false);
  assert.equal(flags.isError, true);
  assert.equal(flags.severity, 'error');
});

test('warning rides next to a successful result', async () => {
  const result = await client.callTool({
    name: 'billing',
    arguments: { action: 'charge', invoice_id: 'inv_0002', amount_cents: 5000, currency: 'USD' },
  });
  assert.equal(result.isError ?? false, false);
  const blocks = texts(result);
  assert.equal(blocks.length, 2, JSON.stringify(blocks));
  const invoice = JSON.parse(blocks[0]);
  assert.equal(invoice.id, 'inv_0002');
  assert.equal(invoice.status, 'paid');
  assert.ok(blocks[1].startsWith('<tool_error code="ALREADY_PAID" severity="warning">\n'), blocks[1]);
  assert.ok(blocks[1].includes('<message>Invoice inv_0002 is already paid</message>'), blocks[1]);
  assert.ok(blocks[1].includes('<recovery>No action needed; do not charge again.</recovery>'), blocks[1]);
  const flags = fusionFlags(result);
  assert.equal(flags.isError, false);
  assert.equal(flags.code, 'ALREADY_PAID');
  assert.equal(flags.severity, 'warning');
});

// `list_invoices` allows 200 bytes of invoices a result: the three seeded ones come as a page
// of two with a RESULT_TRUNCATED warning (isError false) giving the next call's arguments,
// which the client sends as given to get the last page, whole.
test('a list over the result limit: a page, the warning, and the next call', async () => {
  const first = await client.callTool({ name: 'billing', arguments: { action: 'list_invoices' } });
  assert.equal(first.isError, false);
  const [page, warning] = texts(first);
  assert.ok(page.length <= 200, `${page.length} bytes`);
  assert.deepEqual(JSON.parse(page).map((i) => i.id), ['inv_0001', 'inv_0002']);
  assert.ok(warning.startsWith('<tool_error code="RESULT_TRUNCATED" severity="warning">'), warning);
  assert.ok(warning.includes('2 of 3 items were returned'), warning);
  const flags = fusionFlags(first);
  assert.equal(flags.code, 'RESULT_TRUNCATED');
  assert.equal(flags.isError, false);
  assert.equal(flags.errorCategory, 'validation');
  assert.equal(flags.isRetryable, false);

  const next = /Call again with (\{.*\}) for the next items\./.exec(warning);
  assert.ok(next, `no next call in ${warning}`);
  const second = await client.callTool({ name: 'billing', arguments: JSON.parse(next[1]) });
  assert.equal(second.isError, false);
  const rest = texts(second);
  assert.equal(rest.length, 1, `the last page carries no warning: ${rest}`);
  assert.deepEqual(JSON.parse(rest[0]).map((i) => i.id), ['inv_0003']);
});

test('domain error: AMOUNT_OVER_BALANCE names the right amount', async () => {
  const result = await client.callTool({
    name: 'billing',
    arguments: { action: 'charge', invoice_id: 'inv_0003', amount_cents: 5000, currency: 'EUR' },
  });
  assert.equal(result.isError, true);
  const [text] = texts(result);
  assert.ok(text.startsWith('<tool_error code="AMOUNT_OVER_BALANCE" severity="error">\n'), text);
  assert.ok(text.includes('<recovery>Charge at most 990 cents for this invoice.</recovery>'), text);
  assert.ok(text.includes('<detail key="balanceCents">990</detail>'), text);
  const flags = fusionFlags(result);
  assert.equal(flags.code, 'AMOUNT_OVER_BALANCE');
  assert.equal(flags.errorCategory, 'validation');
  assert.equal(flags.isRetryable, false);
});

test('domain error: CONFLICT recovery names the invoice currency', async () => {
  const result = await client.callTool({
    name: 'billing',
    arguments: { action: 'charge', invoice_id: 'inv_0001', amount_cents: 12000, currency: 'USD' },
  });
  assert.equal(result.isError, true);
  const [text] = texts(result);
  assert.ok(text.startsWith('<tool_error code="CONFLICT" severity="error">\n'), text);
  assert.match(/<recovery>(.*)<\/recovery>/.exec(text)?.[1] ?? '', /EUR/);
  assert.equal(fusionFlags(result).code, 'CONFLICT');
});

test('internal error: INTERNAL_ERROR with errorId, no secret leaks', async () => {
  const result = await client.callTool({
    name: 'billing',
    arguments: { action: 'refund', invoice_id: 'inv_0003', amount_cents: 100 },
  });
  assert.equal(result.isError, true);
  const wire = JSON.stringify(result);
  for (const secret of ['postgres://', 'hunter2', '10.0.0.9']) {
    assert.ok(!wire.includes(secret), `${secret} leaked to the client: ${wire}`);
  }
  const [text] = texts(result);
  assert.ok(text.startsWith('<tool_error code="INTERNAL_ERROR" severity="error">\n'), text);
  assert.ok(text.includes('<detail key="errorId">'), text);
  const flags = fusionFlags(result);
  assert.equal(flags.code, 'INTERNAL_ERROR');
  assert.equal(flags.errorCategory, 'unknown');
  assert.equal(flags.isRetryable, false);
});

test('unknown tool: JSON-RPC -32602 protocol error', async () => {
  await assert.rejects(
    client.callTool({ name: 'no_such_tool', arguments: { action: 'list_invoices' } }),
    (err) => {
      assert.ok(err instanceof McpError, `expected McpError, got ${err}`);
      assert.equal(err.code, ErrorCode.InvalidParams);
      assert.equal(err.code, -32602);
      return true;
    },
  );
  const again = await client.callTool({ name: 'billing', arguments: { action: 'get_invoice', id: 'inv_0001' } });
  assert.equal(again.isError ?? false, false);
});

test('a second HTTP session works alongside the first', async () => {
  const other = await newClient();
  try {
    // The open invoices fit in one result (all three are over `list_invoices`' 200 bytes).
    const result = await other.callTool({ name: 'billing', arguments: { action: 'list_invoices', status: 'open' } });
    assert.equal(result.isError ?? false, false);
    const ids = JSON.parse(texts(result)[0]).map((inv) => inv.id);
    assert.deepEqual(ids, ['inv_0001', 'inv_0003']);
  } finally {
    await other.close();
  }
});

test('without a bearer token: HTTP 401 naming the resource metadata', async () => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  assert.equal(res.status, 401);
  const metadata = new URL('/.well-known/oauth-protected-resource/mcp', url).href;
  assert.equal(
    res.headers.get('www-authenticate'),
    `Bearer resource_metadata="${metadata}", scope="charge refund"`,
  );
  const doc = await (await fetch(metadata)).json();
  assert.equal(doc.resource, url);
  assert.deepEqual(doc.scopes_supported, ['charge', 'refund']);
});
