/**
 * Architecture rules (docs/ARCHITECTURE.md): dependencies point inward.
 * domain ← application ← adapters / infrastructure; the domain is pure TypeScript.
 * The SDK (packages/sdk/src) stands alone: it never reaches the server, its core is browser-safe (the web inbox
 * bundles it), and its framework integrations stay out of that core. No cycles anywhere.
 * Run over both trees by `npm run lint:arch` (part of `npm test`).
 */
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment: 'src/domain imports nothing but itself: no framework, no ORM, no validation library, no Node I/O.',
      severity: 'error',
      from: { path: '^src/domain' },
      to: { pathNot: '^src/domain' },
    },
    {
      name: 'application-depends-on-domain-only',
      comment: 'Use cases see the domain and their own ports; adapters and infrastructure plug into the ports.',
      severity: 'error',
      from: { path: '^src/application' },
      to: { path: '^src/(adapters|infrastructure)' },
    },
    {
      name: 'application-frameworks',
      comment: 'The application layer may use Nest DI/CQRS decorators, nothing heavier (no ORM, no HTTP).',
      severity: 'error',
      from: { path: '^src/application' },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'core'],
        pathNot: '^node_modules/@nestjs/(common|cqrs)',
      },
    },
    {
      name: 'infrastructure-does-not-reach-adapters',
      severity: 'error',
      from: { path: '^src/infrastructure' },
      to: { path: '^src/adapters' },
    },
    {
      name: 'grpc-does-not-reach-http',
      comment:
        'REST and gRPC are siblings: what both need (request modules, problems, limits, validation) is in src/adapters/api.',
      severity: 'error',
      from: { path: '^src/adapters/grpc' },
      to: { path: '^src/adapters/http' },
    },
    {
      name: 'request-layer-serves-both-transports',
      comment:
        'src/adapters/api (request modules, the API schemas in dto/, problems) is shared by REST and gRPC, so it imports neither.',
      severity: 'error',
      from: { path: '^src/adapters/api' },
      to: { path: '^src/adapters/(http|grpc)' },
    },
    {
      name: 'sdk-stands-alone',
      comment: 'The published SDK ships without the server: it knows the API only from its OpenAPI document.',
      severity: 'error',
      from: { path: '^packages/sdk/src' },
      to: { path: '^(src|test|web)/' },
    },
    {
      name: 'sdk-core-is-browser-safe',
      comment:
        "The SDK's core (all but integrations/) runs in browsers: no Node modules, no package but jose. The gRPC " +
        'watch loads its Node-only packages by a computed specifier, out of bundles and of this check.',
      severity: 'error',
      from: { path: '^packages/sdk/src/[^/]+\\.ts$' },
      to: {
        dependencyTypes: ['core', 'npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'],
        pathNot: '^node_modules/jose/',
      },
    },
    {
      name: 'sdk-core-does-not-reach-integrations',
      comment: 'Each framework integration is its own entry point (@tollgate/sdk/ai…); the core never pulls one in.',
      severity: 'error',
      from: { path: '^packages/sdk/src/[^/]+\\.ts$' },
      to: { path: '^packages/sdk/src/integrations/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '\\.spec\\.ts$' },
  },
};
