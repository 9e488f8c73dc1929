/**
 * Architecture rules (DEVELOPERS.md): dependencies point inward.
 * domain ← application ← adapters / infrastructure; the domain is pure TypeScript.
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
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'core'], pathNot: '^node_modules/@nestjs/(common|cqrs)' },
    },
    {
      name: 'infrastructure-does-not-reach-adapters',
      severity: 'error',
      from: { path: '^src/infrastructure' },
      to: { path: '^src/adapters' },
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
