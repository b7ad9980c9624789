// Shared by the client tests: spawn an example server over Streamable HTTP on a free loopback
// port, wait for it to listen, and stop it again. Not a test file (node --test runs the
// *.test.mjs files it is given).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

export function canConnect(port) {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

export async function waitForPort(server, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.exit) throw new Error(`${server.name} exited early (${server.exit}):\n${server.log}`);
    if (await canConnect(server.port)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${server.name} did not listen on 127.0.0.1:${server.port} within ${timeoutMs} ms:\n${server.log}`);
}

// Spawns `bin --http 127.0.0.1:<free port>` and waits (20 s at most) until it listens. Returns
// { name, child, port, url, log, exit }: `url` is the MCP endpoint, `log` collects the child's
// stdout and stderr, `exit` describes its exit (null while it runs). If it never listens, the
// child is stopped and the error thrown.
export async function startServer(bin, name) {
  assert.ok(existsSync(bin), `${name} binary not found at ${bin} (cargo build -p examples --bin ${name})`);
  const port = await freePort();
  const child = spawn(bin, ['--http', `127.0.0.1:${port}`], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, RUST_LOG: process.env.RUST_LOG || 'warn' },
  });
  const server = { name, child, port, url: `http://127.0.0.1:${port}/mcp`, log: '', exit: null };
  child.stdout.on('data', (d) => (server.log += d));
  child.stderr.on('data', (d) => (server.log += d));
  child.on('exit', (code, signal) => (server.exit = `code ${code}, signal ${signal}`));
  try {
    await waitForPort(server, 20000);
  } catch (err) {
    await stopServer(server);
    throw err;
  }
  return server;
}

// Closes `client` (if any), then stops the server: SIGTERM, SIGKILL after 3 s.
export async function stopServer(server, client) {
  try {
    if (client) await client.close();
  } finally {
    if (server && !server.exit) {
      const { child } = server;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }
  }
}

// The development token with both scopes that fusion-billing prints at start
// (`export BILLING_TOKEN=...` on stderr), once it has printed it.
export async function waitForToken(server, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const match = /^export BILLING_TOKEN=(\S+)$/m.exec(server.log);
    if (match) return match[1];
    if (server.exit) throw new Error(`fusion-billing exited early (${server.exit}):\n${server.log}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`fusion-billing printed no token within ${timeoutMs} ms:\n${server.log}`);
}
