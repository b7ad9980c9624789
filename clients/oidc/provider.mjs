// A real OpenID provider (oidc-provider, pinned in package.json) on loopback, for fusion's
// auth tests (fusion/tests/auth_oidc.rs) and for trying BearerAuth by hand.
//
//   node provider.mjs PORT STATE_DIR [rotate]
//
// Issuer http://127.0.0.1:PORT. Clients (client_credentials grant, scope "charge"):
//   mcp-client / client-secret  mints access tokens: POST /token with
//                               grant_type=client_credentials&scope=charge&resource=<URL>
//   mcp-server / server-secret  the resource server: introspects (POST /token/introspection)
// Resource indicators (RFC 8707): the token's audience is the resource URL without its query;
// `?format=opaque` issues an opaque token (introspection only), else a JWT (typ at+jwt, ES256);
// `?ttl=N` sets its lifetime in seconds (default 300). Revocation: POST /token/revocation.
// Signing keys live in STATE_DIR/jwks.json; `rotate` puts a new key first (the old one stays
// second), so restarting on the same port rotates keys under a running resource server.
// Prints "listening <issuer>" when ready.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Provider, { errors } from 'oidc-provider';

const [port, state, rotate] = process.argv.slice(2);
if (!port || !state) {
  console.error('usage: node provider.mjs PORT STATE_DIR [rotate]');
  process.exit(2);
}
mkdirSync(state, { recursive: true });
const file = join(state, 'jwks.json');
let keys = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).keys : [];
if (keys.length === 0 || rotate === 'rotate') {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const key = { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), alg: 'ES256', use: 'sig' };
  keys = [key, ...keys].slice(0, 2);
  writeFileSync(file, JSON.stringify({ keys }));
}

const issuer = `http://127.0.0.1:${port}`;
const provider = new Provider(issuer, {
  clients: [
    {
      client_id: 'mcp-client',
      client_secret: 'client-secret',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      id_token_signed_response_alg: 'ES256',
      scope: 'charge',
    },
    {
      client_id: 'mcp-server',
      client_secret: 'server-secret',
      grant_types: [],
      redirect_uris: [],
      response_types: [],
      id_token_signed_response_alg: 'ES256',
    },
  ],
  jwks: { keys },
  scopes: ['charge'],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo(ctx, resource) {
        let url;
        try {
          url = new URL(resource);
        } catch {
          throw new errors.InvalidTarget();
        }
        const opaque = url.searchParams.get('format') === 'opaque';
        return {
          scope: 'charge',
          audience: `${url.origin}${url.pathname}`,
          accessTokenTTL: Number(url.searchParams.get('ttl') ?? 300),
          accessTokenFormat: opaque ? 'opaque' : 'jwt',
          ...(opaque ? {} : { jwt: { sign: { alg: 'ES256' } } }),
        };
      },
    },
  },
});
provider.listen(Number(port), '127.0.0.1', () => console.log(`listening ${issuer}`));
