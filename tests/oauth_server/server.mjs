// A real OAuth 2.1 authorization server for the auth tests: panva's oidc-provider.
//
//   node server.mjs            listens on a free loopback port, prints {"port": N} on stdout
//   PORT=9000 node server.mjs  listens on that port (docs/auth-local.md)
//
// It hosts two issuers on one port, each an oidc-provider instance mounted under a path:
//   /main   the authorization server our test resource servers trust
//   /rogue  another issuer that signs with the SAME keys (a token from it must still be
//           refused: wrong `iss`)
//   /rotating  an issuer of its own key, which the tests rotate
// Access tokens are JWTs (RFC 9068, `typ: at+jwt`) bound to the `resource` the client asks
// for (RFC 8707), except for the client `svc-opaque`, whose tokens are opaque (for the
// RFC 7662 introspection tests). The client `svc-short`, and registered clients whose
// name says "2-second tokens", get tokens that live 2 seconds.
//
// Test-only routes (loopback only):
//   POST /admin/rotate/<tenant>   replace the tenant's signing key (a JWKS rotation)
//   /<tenant>/interaction/<uid>  the login/consent step, approved at once as user "alice"
//                                with every scope asked for (a browser-less user agent)
import http from 'node:http';
import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import Provider from 'oidc-provider';

const generate = promisify(generateKeyPair);
const SCOPES = 'notes:read notes:write admin';

const clients = [
  { client_id: 'svc', client_secret: 'svc-secret', grant_types: ['client_credentials'],
    redirect_uris: [], response_types: [], scope: SCOPES },
  { client_id: 'svc-short', client_secret: 'svc-secret', grant_types: ['client_credentials'],
    redirect_uris: [], response_types: [], scope: SCOPES },
  { client_id: 'svc-opaque', client_secret: 'svc-secret', grant_types: ['client_credentials'],
    redirect_uris: [], response_types: [], scope: SCOPES },
  // The resource server's own credentials, to call the introspection endpoint.
  { client_id: 'rs', client_secret: 'rs-secret', grant_types: [], redirect_uris: [],
    response_types: [] },
];

let kidCounter = 0;
async function signingKey() {
  const { privateKey } = await generate('rsa', { modulusLength: 2048 });
  const jwk = privateKey.export({ format: 'jwk' });
  return { ...jwk, kid: `key-${++kidCounter}`, use: 'sig', alg: 'RS256' };
}

function makeProvider(name, issuer, keys) {
  const provider = new Provider(issuer, {
    clients,
    jwks: { keys },
    scopes: ['openid', 'offline_access', ...SCOPES.split(' ')],
    clientDefaults: { token_endpoint_auth_method: 'client_secret_basic' },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: {
        enabled: true,
        allowedPolicy: async (ctx, client) => client.clientId === 'rs',
      },
      registration: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (ctx, client, oneOf) => oneOf,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (ctx, resourceIndicator, client) => ({
          scope: SCOPES,
          audience: resourceIndicator,
          accessTokenTTL: shortLived(client) ? 2 : 300,
          accessTokenFormat: client.clientId === 'svc-opaque' ? 'opaque' : 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    pkce: { required: () => true },
    issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
    interactions: { url: (ctx, interaction) => `/${name}/interaction/${interaction.uid}` },
    findAccount: async (ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    ttl: { AccessToken: 300, AuthorizationCode: 60, Grant: 3600, Interaction: 600,
           RefreshToken: 3600, Session: 3600 },
  });
  return provider;
}

const tenants = {};  // name -> { provider, callback }

async function mountTenant(name, origin, keys) {
  const provider = makeProvider(name, `${origin}/${name}`, keys);
  tenants[name] = { provider, callback: provider.callback(), keys };
}

// Clients whose tokens live 2 seconds: `svc-short`, and registered clients named so.
function shortLived(client) {
  return client.clientId === 'svc-short' || (client.clientName ?? '').includes('2-second tokens');
}

async function finishInteraction(provider, req, res) {
  // The login and consent a user would give in a browser, given at once: user "alice"
  // grants every scope asked for, for every resource asked for.
  const { params, session } = await provider.interactionDetails(req, res);
  const accountId = session?.accountId ?? 'alice';
  const grant = new provider.Grant({ accountId, clientId: params.client_id });
  const requested = params.scope ?? '';
  grant.addOIDCScope(requested);
  for (const resource of [].concat(params.resource ?? [])) {
    grant.addResourceScope(resource, requested);
  }
  const grantId = await grant.save();
  const result = { login: { accountId }, consent: { grantId } };
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
}

const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, 'http://localhost');
    const rotate = url.pathname.match(/^\/admin\/rotate\/(\w+)$/);
    if (rotate && req.method === 'POST') {
      const name = rotate[1];
      await mountTenant(name, origin, [await signingKey()]);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kid: tenants[name].keys[0].kid }));
      return;
    }
    const name = url.pathname.split('/')[1];
    const tenant = tenants[name];
    if (!tenant) {
      res.writeHead(404).end('not found');
      return;
    }
    if (url.pathname.startsWith(`/${name}/interaction/`)) {
      await finishInteraction(tenant.provider, req, res);
      return;
    }
    req.originalUrl = req.url;
    req.url = req.url.slice(name.length + 1) || '/';
    tenant.callback(req, res);
  } catch (error) {
    console.error(error);
    if (!res.headersSent) res.writeHead(500);
    res.end(String(error));
  }
});

let origin;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', async () => {
  const { port } = server.address();
  origin = `http://127.0.0.1:${port}`;
  const keys = [await signingKey()];
  await mountTenant('main', origin, keys);
  await mountTenant('rogue', origin, keys);
  await mountTenant('rotating', origin, [await signingKey()]);
  process.stdout.write(JSON.stringify({ port }) + '\n');
});

process.stdin.on('end', () => process.exit(0));  // the test ended: so do we
process.stdin.resume();
