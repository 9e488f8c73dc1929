import { GatewayConfigError, parseGatewayConfig } from '../../src/integrations/mcp-config.js';

const faultsOf = (raw: unknown, env: Record<string, string> = {}): string[] => {
  try {
    parseGatewayConfig(raw, env);
  } catch (e) {
    if (e instanceof GatewayConfigError) return e.faults;
    throw e;
  }
  throw new Error('the config was accepted');
};

describe('the MCP gateway config', () => {
  it('takes the mcpServers block clients use, with Tollgate and the user from the environment', () => {
    const config = parseGatewayConfig(
      {
        user: { id: 'ann', name: 'Ann', roles: ['admin'] },
        mcpServers: {
          files: {
            command: 'npx',
            args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv'],
            env: { LOG: '${LOG_LEVEL}' },
          },
          github: {
            type: 'http',
            url: 'https://mcp.example.com/mcp',
            headers: { Authorization: 'Bearer ${GITHUB_TOKEN}' },
          },
        },
      },
      {
        TOLLGATE_URL: 'http://tollgate.internal:8080/',
        TOLLGATE_TOKEN: 'agent-jwt',
        TOLLGATE_USER_TOKEN: 'ann-jwt',
        LOG_LEVEL: 'debug',
        GITHUB_TOKEN: 'gh-secret',
      },
    );
    expect(config).toEqual({
      tollgate: { url: 'http://tollgate.internal:8080', token: 'agent-jwt' },
      user: { id: 'ann', name: 'Ann', roles: ['admin'], token: 'ann-jwt' },
      upstreams: [
        {
          name: 'files',
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv'],
          env: { LOG: 'debug' },
        },
        { name: 'github', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer gh-secret' } },
      ],
      elicitation: true,
      hideDeniedTools: true,
      policyRefreshSeconds: 60,
      progressIntervalSeconds: 10,
      limits: {
        pendingCallsPerSession: 8,
        sessions: 100,
        sessionsPerUser: 5,
        failedAuthPerMinute: 30,
        toolTimeoutSeconds: 300,
      },
    });
  });

  it("takes the web inbox's address for the links to a call's card (config, else TOLLGATE_INBOX_URL), refusing one not http(s)", () => {
    const servers = { mcpServers: { files: { command: 'x' } } };
    const env = { TOLLGATE_TOKEN: 't', TOLLGATE_INBOX_URL: 'https://inbox.example.com/' };
    expect(parseGatewayConfig(servers, env).tollgate.inboxUrl).toBe('https://inbox.example.com');
    expect(
      parseGatewayConfig({ ...servers, tollgate: { inboxUrl: 'https://tollgate.example.com' } }, env).tollgate.inboxUrl,
    ).toBe('https://tollgate.example.com');
    expect(parseGatewayConfig(servers, { TOLLGATE_TOKEN: 't' }).tollgate).not.toHaveProperty('inboxUrl');
    expect(faultsOf({ ...servers, tollgate: { inboxUrl: 'inbox' } }, { TOLLGATE_TOKEN: 't' })).toEqual([
      'tollgate.inboxUrl: must be an http(s) URL, got "inbox"',
    ]);
  });

  it('names every fault with its path at once', () => {
    expect(
      faultsOf({
        tollgate: { url: 'tollgate.internal', token: '${MISSING}' },
        mcpServers: {
          'my files': { command: 'x' },
          both: { command: 'node', url: 'http://x' },
          web: { url: 'http://x', args: ['a'] },
        },
        http: { port: 70000 },
        limits: { sessions: 0 },
        colour: 'blue',
      }),
    ).toEqual([
      'tollgate.token: ${MISSING} is not set in the environment',
      'colour: unknown field (allowed: tollgate, user, mcpServers, http, elicitation, hideDeniedTools, policyRefreshSeconds, progressIntervalSeconds, limits, askHuman)',
      'tollgate.url: must be an http(s) URL, got "tollgate.internal"',
      'mcpServers.my files: the name must match /^[A-Za-z0-9_-]{1,64}$/ (namespace: true prefixes the names of its tools with it)',
      'mcpServers.both: give either command (a stdio server) or url (a Streamable HTTP server)',
      'mcpServers.web.args: only for command (stdio) servers',
      'http.port: must be a whole number from 0 to 65535',
      'limits.sessions: must be a whole number from 1 to 10000',
    ]);
  });

  it('takes resources and prompts on per server (off by default), and hideDeniedTools and policyRefreshSeconds; refuses other values', () => {
    const config = parseGatewayConfig(
      {
        mcpServers: { files: { command: 'node', resources: true, prompts: false }, web: { url: 'http://x' } },
        hideDeniedTools: false,
        policyRefreshSeconds: 0,
      },
      { TOLLGATE_TOKEN: 't' },
    );
    expect(config.upstreams).toEqual([
      { name: 'files', command: 'node', resources: true },
      { name: 'web', url: 'http://x' },
    ]);
    expect(config).toMatchObject({ hideDeniedTools: false, policyRefreshSeconds: 0 });
    expect(
      faultsOf(
        {
          mcpServers: { files: { command: 'node', resources: 'no', prompts: 0 } },
          hideDeniedTools: 'yes',
          policyRefreshSeconds: 90_000,
        },
        { TOLLGATE_TOKEN: 't' },
      ),
    ).toEqual([
      'mcpServers.files.resources: must be true or false',
      'mcpServers.files.prompts: must be true or false',
      'hideDeniedTools: must be true or false',
      'policyRefreshSeconds: must be a whole number from 0 to 86400',
    ]);
  });

  it('refuses a config without upstreams, without an agent token, or that is not an object', () => {
    expect(faultsOf({ mcpServers: {} })).toEqual([
      'tollgate.token: no token: set TOLLGATE_TOKEN (an agent token) or tollgate.token in the config',
      'mcpServers: required: at least one upstream MCP server',
    ]);
    expect(faultsOf('mcpServers: x')).toEqual(['the config must be a YAML or JSON object with an `mcpServers` block']);
    const many = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`s${i}`, { url: 'http://x' }]));
    expect(faultsOf({ mcpServers: many }, { TOLLGATE_TOKEN: 't' })).toEqual([
      'mcpServers: at most 32 upstream servers',
    ]);
  });

  it("takes namespace and trustAnnotations per server, and the HTTP listener's allowed hosts and origins", () => {
    const config = parseGatewayConfig(
      {
        mcpServers: {
          files: { command: 'node', namespace: true, trustAnnotations: true },
          web: { url: 'http://x', trustAnnotations: false },
        },
        http: { allowedHosts: ['Gateway.example.com', '[::1]'], allowedOrigins: ['https://app.example.com'] },
        limits: { sessionsPerUser: 2, failedAuthPerMinute: 0 },
      },
      { TOLLGATE_TOKEN: 't' },
    );
    expect(config.upstreams).toEqual([
      { name: 'files', command: 'node', namespace: true, trustAnnotations: true },
      { name: 'web', url: 'http://x' },
    ]);
    expect(config.http).toEqual({
      host: '127.0.0.1',
      allowedHosts: ['gateway.example.com', '[::1]'],
      allowedOrigins: ['https://app.example.com'],
    });
    expect(config.limits).toMatchObject({ sessionsPerUser: 2, failedAuthPerMinute: 0 });
    expect(
      faultsOf(
        {
          mcpServers: { files: { command: 'node', namespace: 'yes', trustAnnotations: 1 } },
          http: {
            allowedHosts: ['gateway.example.com:8090', 'https://x'],
            allowedOrigins: ['app.example.com', 'https://app.example.com/path'],
          },
          limits: { sessionsPerUser: 0 },
        },
        { TOLLGATE_TOKEN: 't' },
      ),
    ).toEqual([
      'mcpServers.files.namespace: must be true or false',
      'mcpServers.files.trustAnnotations: must be true or false',
      'http.allowedHosts[0]: a host name without scheme or port (example.com, 127.0.0.1, [::1]), got "gateway.example.com:8090"',
      'http.allowedHosts[1]: a host name without scheme or port (example.com, 127.0.0.1, [::1]), got "https://x"',
      'http.allowedOrigins[0]: an origin such as https://app.example.com (scheme, host, optional port), got "app.example.com"',
      'http.allowedOrigins[1]: an origin such as https://app.example.com (scheme, host, optional port), got "https://app.example.com/path"',
      'limits.sessionsPerUser: must be a whole number from 1 to 1000',
    ]);
  });

  it('expands variables inside strings only, so a value can never add fields', () => {
    const config = parseGatewayConfig(
      { mcpServers: { s: { command: '${CMD}', args: ['${ARG}'] } } },
      { TOLLGATE_TOKEN: 't', CMD: 'node', ARG: '{"url": "http://evil"}' },
    );
    expect(config.upstreams).toEqual([{ name: 's', command: 'node', args: ['{"url": "http://evil"}'] }]);
  });
});
