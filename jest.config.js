// Nest 12 ships ES modules only; @swc/jest transforms them (and our TS) to CommonJS for Jest.
// Type-checking is a separate step (`npm run typecheck`), so tests stay fast.
const swcTs = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
};

const base = {
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/test', '<rootDir>/packages'],
  testMatch: ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', swcTs],
    '^.+\\.m?js$': ['@swc/jest', { ...swcTs, jsc: { ...swcTs.jsc, parser: { syntax: 'ecmascript' } } }],
  },
  // The SDK (an ES module workspace) is tested from its TypeScript sources, like the service.
  moduleNameMapper: {
    '^@tollgate/sdk$': '<rootDir>/packages/sdk/src/index.ts',
    '^@tollgate/sdk/(ai|openai-agents|langgraph|adk|langchain)$': '<rootDir>/packages/sdk/src/integrations/$1.ts',
    '^@tollgate/sdk/(.*)$': '<rootDir>/packages/sdk/src/$1.ts',
  },
  resolver: '<rootDir>/packages/sdk/test/jest-resolver.cjs',
  modulePathIgnorePatterns: ['<rootDir>/packages/[^/]+/dist/'],
  // ES modules among them are compiled too (@fastify/static, which Swagger UI under Fastify loads, brings one).
  transformIgnorePatterns: [
    '/node_modules/(?!(@nestjs|file-type|strtok3|token-types|@tokenizer|uint8array-extras|jose|@fastify/static/node_modules/content-disposition|content-disposition|lodash-es)/)',
  ],
  testTimeout: 30000,
};

/**
 * Every other file is isolated: its own database (test/support/database.ts: a new PostgreSQL database, or a copy of
 * an embedded data dir), servers on port 0 or on ports reserved across processes (test/support/process.ts), its
 * own temp dirs. These are not, and run alone after the rest (`npm run test:serial`):
 * - postgres-restart stops and starts the PostgreSQL every other file's database lives on.
 */
const SERIAL = ['test/e2e/postgres-restart.e2e-spec.ts'];

module.exports = {
  // `npm test` runs `--selectProjects parallel` in two workers, then `--selectProjects serial` in one. A plain
  // `jest <paths>` runs whatever files match, from either set.
  projects: [
    {
      ...base,
      displayName: 'parallel',
      testPathIgnorePatterns: ['/node_modules/', ...SERIAL.map((f) => `<rootDir>/${f}`)],
    },
    { ...base, displayName: 'serial', testMatch: SERIAL.map((f) => `<rootDir>/${f}`) },
  ],
  testTimeout: 30000,
  // A worker is replaced once it holds more than this after a file: a safety net, not the normal case (each file's
  // servers, databases and clients are closed by its own hooks).
  workerIdleMemoryLimit: '1GB',
};
