// Real-client interoperability tests: the official TypeScript MCP SDK over Streamable HTTP
// against `fusion-composed --http 127.0.0.1:<port>`: one server with a fusion tool (`notes`),
// an rmcp prompt (`summarize`) and rmcp resources (`note://TITLE`), composed with
// `Server::handler`.
//
// Binary: $FUSION_COMPOSED_BIN, default ../../target/debug/fusion-composed relative to this
// file. The tests never build it. One server process serves every test; the notes the tests add
// have titles of their own.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

import { startServer, stopServer } from './helpers.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.resolve(process.env.FUSION_COMPOSED_BIN || path.join(here, '../../target/debug/fusion-composed'));

let server;
let client;
const logs = [];

function text(result) {
  const [block] = result.content;
  assert.equal(block.type, 'text', `expected text content, got ${JSON.stringify(block)}`);
  return block.text;
}

before(async () => {
  server = await startServer(BIN, 'fusion-composed');
  client = new Client({ name: 'fusion-composed-ts', version: '0.0.0' });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    logs.push(notification.params);
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
});

after(async () => {
  await stopServer(server, client);
});

test('initialize: the capabilities of the tools and of the handler, both instructions', () => {
  assert.equal(client.getServerVersion()?.name, 'fusion-composed');
  const capabilities = client.getServerCapabilities();
  for (const kind of ['tools', 'prompts', 'resources']) {
    assert.ok(capabilities[kind], `capability ${kind} missing: ${JSON.stringify(capabilities)}`);
  }
  assert.equal(
    client.getInstructions(),
    'Keep notes with the notes tool.\n\nEach note is also a resource, note://TITLE.',
  );
});

test('tools, prompts and resources are listed', async () => {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name), ['notes']);
  const { prompts } = await client.listPrompts();
  assert.deepEqual(prompts.map((p) => p.name), ['summarize']);
  const { resources } = await client.listResources();
  assert.ok(resources.some((r) => r.uri === 'note://welcome'), JSON.stringify(resources));
});

test('the prompt and a resource are fetched', async () => {
  const prompt = await client.getPrompt({ name: 'summarize', arguments: { title: 'welcome' } });
  assert.match(prompt.messages[0].content.text, /fusion serves the tools/);
  const read = await client.readResource({ uri: 'note://welcome' });
  assert.equal(read.contents[0].text, 'fusion serves the tools, rmcp the prompts and resources.');
});

test('the tool writes what the resources read', async () => {
  const result = await client.callTool({ name: 'notes', arguments: { action: 'add', title: 'ts', text: 'from node' } });
  assert.equal(result.isError, false);
  assert.equal(text(result), 'Saved as note://ts.');
  const read = await client.readResource({ uri: 'note://ts' });
  assert.equal(read.contents[0].text, 'from node');
});

test('bad arguments get the validation envelope', async () => {
  const result = await client.callTool({ name: 'notes', arguments: { action: 'add', title: '' } });
  assert.equal(result.isError, true);
  const lines = text(result).split('\n');
  assert.equal(lines[0], '<validation_error action="notes.add">');
  assert.match(lines[1], /^<field name="text">Missing required field\./);
  assert.match(lines[2], /^<field name="title">Too short\./);
  assert.equal(result._meta['fusion/error'].code, 'VALIDATION_ERROR');
});

test('an unknown resource is a JSON-RPC error', async () => {
  await assert.rejects(client.readResource({ uri: 'note://nope' }), (error) => {
    assert.ok(error instanceof McpError, String(error));
    assert.match(error.message, /No resource note:\/\/nope\./);
    return true;
  });
});

test('progress and log messages of a call reach the client', async () => {
  const reports = [];
  const result = await client.callTool(
    { name: 'notes', arguments: { action: 'count_words' } },
    undefined,
    { onprogress: (progress) => reports.push(progress) },
  );
  const notes = reports.length;
  assert.ok(notes >= 1, 'at least the welcome note');
  assert.deepEqual(reports.at(-1), { progress: notes, total: notes, message: 'counting' });
  const words = Number(text(result));
  assert.ok(words > 0);
  // rmcp sends a log message outside the call's event stream: on the session's own stream
  // (the client's HTTP GET), so it may arrive after the result.
  const deadline = Date.now() + 5000;
  while (logs.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(logs.at(-1), { level: 'info', data: { notes, words } });
});
