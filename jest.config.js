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

module.exports = {
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
    '^@tollgate/sdk/(ai|openai-agents|langgraph)$': '<rootDir>/packages/sdk/src/integrations/$1.ts',
    '^@tollgate/sdk/(.*)$': '<rootDir>/packages/sdk/src/$1.ts',
  },
  resolver: '<rootDir>/packages/sdk/test/jest-resolver.cjs',
  modulePathIgnorePatterns: ['<rootDir>/packages/[^/]+/dist/'],
  transformIgnorePatterns: [
    '/node_modules/(?!(@nestjs|file-type|strtok3|token-types|@tokenizer|uint8array-extras|jose)/)',
  ],
  testTimeout: 30000,
  // One test file at a time, in a worker that is replaced once it holds more than this after a file: the files
  // start servers, embedded databases and gRPC clients, and a single in-band process kept growing past 4 GB over
  // the whole suite, slowing every later file (and timing out their hooks) with garbage collection.
  workerIdleMemoryLimit: '1GB',
};
