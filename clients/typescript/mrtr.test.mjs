// The billing example's `refund` confirmation for the TypeScript SDK v2
// (`@modelcontextprotocol/client`) pinned to the stateless 2026-07-28 revision, which forbids
// server-to-client requests: multi round-trip requests (MRTR, SEP-2322). The client fulfils the
// `input_required` answer through its `elicitation/create` handler and calls again; driven by
// hand, a forged state and a state sent twice are refused (JSON-RPC -32602, `data.code`
// REQUEST_STATE_INVALID).
//
// Binary: $FUSION_BILLING_BIN, as for billing.test.mjs; each test starts its own server, since a
// confirmed refund changes the invoice.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client, StreamableHTTPClientTransport, isInputRequiredResult } from '@modelcontextprotocol/client';

import { startServer, stopServer, waitForToken } from './helpers.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.resolve(process.env.FUSION_BILLING_BIN || path.join(here, '../../target/debug/fusion-billing'));
const REFUND = { action: 'refund', invoice_id: 'inv_0002', amount_cents: 100 };
const QUESTION = 'Refund 100 cents on invoice inv_0002?';

// A 2026-07-28 client of a fresh billing server whose user answers `answer`; `options` go to the
// client (manual mode: `{ inputRequired: { autoFulfill: false } }`).
async function connect(answer, options = {}) {
  const server = await startServer(BIN, 'fusion-billing');
  const token = await waitForToken(server, 20000);
  const asked = [];
  const client = new Client(
    { name: 'fusion-mrtr-test', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } }, ...options },
  );
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params.message);
    return answer === 'accept' ? { action: 'accept', content: { confirm: true } } : { action: answer };
  });
  const headers = { Authorization: `Bearer ${token}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers } }));
  return { server, client, asked };
}

async function status(client) {
  const result = await client.callTool({ name: 'billing', arguments: { action: 'get_invoice', id: 'inv_0002' } });
  return JSON.parse(result.content[0].text).status;
}

const code = (result) => result._meta['fusion/error'].code;

test('the user confirms in a second round', async () => {
  const { server, client, asked } = await connect('accept');
  try {
    const result = await client.callTool({ name: 'billing', arguments: REFUND });
    assert.equal(result.isError, false, JSON.stringify(result));
    assert.deepEqual(asked, [QUESTION]);
    assert.equal(await status(client), 'open');
  } finally {
    await stopServer(server, client);
  }
});

test('a declining user stops the refund', async () => {
  const { server, client, asked } = await connect('decline');
  try {
    const result = await client.callTool({ name: 'billing', arguments: REFUND });
    assert.equal(code(result), 'USER_DECLINED');
    assert.deepEqual(asked, [QUESTION]);
    assert.equal(await status(client), 'paid');
  } finally {
    await stopServer(server, client);
  }
});

test('a forged or replayed request state is refused', async () => {
  const { server, client } = await connect('accept', { inputRequired: { autoFulfill: false } });
  try {
    const first = await client.callTool({ name: 'billing', arguments: REFUND }, { allowInputRequired: true });
    assert.ok(isInputRequiredResult(first), JSON.stringify(first));
    assert.deepEqual(Object.keys(first.inputRequests), ['q0']);
    assert.equal(first.inputRequests.q0.params.message, QUESTION);
    const again = (requestState) =>
      client.callTool(
        { name: 'billing', arguments: REFUND, inputResponses: { q0: { action: 'accept', content: { confirm: true } } }, requestState },
        { allowInputRequired: true },
      );
    const refused = (error) => error.code === -32602 && error.data?.code === 'REQUEST_STATE_INVALID';
    await assert.rejects(again(first.requestState.slice(0, -4) + 'AAAA'), refused);
    assert.equal(await status(client), 'paid');
    const done = await again(first.requestState);
    assert.equal(done.isError, false, JSON.stringify(done));
    await assert.rejects(again(first.requestState), refused);
    assert.equal(await status(client), 'open');
  } finally {
    await stopServer(server, client);
  }
});
