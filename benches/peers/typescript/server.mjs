// The peer comparison's TypeScript server (benches/peers/run.sh): `get_invoice` with the official
// MCP SDK over Streamable HTTP on 127.0.0.1:PORT/mcp, written as the SDK's README writes a server
// with sessions: `createMcpExpressApp`, one `McpServer` and `StreamableHTTPServerTransport` per
// session, event-stream answers (the transport's default).
//
// usage: node server.mjs PORT
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const port = Number(process.argv[2]);

const invoice = {
  id: z.string(),
  customer: z.string(),
  amount_cents: z.number().int(),
  currency: z.string(),
  status: z.string(),
};

function server() {
  const mcp = new McpServer({ name: 'peer-typescript', version: '1.0.0' });
  mcp.registerTool(
    'get_invoice',
    {
      description: 'Reads one invoice by its id. Only `inv_1` exists.',
      inputSchema: { id: z.string().describe("The invoice's id") },
      outputSchema: invoice,
      annotations: { readOnlyHint: true },
    },
    async ({ id }) => {
      if (id !== 'inv_1') {
        return { content: [{ type: 'text', text: `No invoice with id ${id}` }], isError: true };
      }
      const found = { id: 'inv_1', customer: 'cus_1', amount_cents: 1250, currency: 'EUR', status: 'paid' };
      return { content: [{ type: 'text', text: JSON.stringify(found) }], structuredContent: found };
    },
  );
  return mcp;
}

const transports = {};
const app = createMcpExpressApp();

app.post('/mcp', async (req, res) => {
  const sessionId = req.headers['mcp-session-id'];
  let transport = sessionId ? transports[sessionId] : undefined;
  if (!transport && !sessionId && isInitializeRequest(req.body)) {
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        transports[id] = transport;
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) delete transports[transport.sessionId];
    };
    await server().connect(transport);
  }
  if (!transport) {
    res.status(400).json({ jsonrpc: '2.0', error: { code: -32000, message: 'No valid session' }, id: null });
    return;
  }
  await transport.handleRequest(req, res, req.body);
});

const inSession = async (req, res) => {
  const transport = transports[req.headers['mcp-session-id']];
  if (!transport) {
    res.status(400).send('No valid session');
    return;
  }
  await transport.handleRequest(req, res);
};
app.get('/mcp', inSession);
app.delete('/mcp', inSession);

app.listen(port, '127.0.0.1');
