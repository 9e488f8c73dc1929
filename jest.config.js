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
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', swcTs],
    '^.+\\.m?js$': ['@swc/jest', { ...swcTs, jsc: { ...swcTs.jsc, parser: { syntax: 'ecmascript' } } }],
  },
  transformIgnorePatterns: [
    '/node_modules/(?!(@nestjs|file-type|strtok3|token-types|@tokenizer|uint8array-extras|jose)/)',
  ],
  testTimeout: 30000,
};
