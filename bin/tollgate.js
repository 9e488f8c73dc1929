#!/usr/bin/env node
'use strict';
// The built CLI (npm install and npm start build it into dist/).
const path = require('node:path');
const fs = require('node:fs');
// `tollgate hook …` runs once per tool call of an agent: it starts from its own small entry, not the whole CLI.
const hook = process.argv[2] === 'hook';
const entry = path.join(__dirname, '..', 'dist', 'src', 'adapters', 'cli', hook ? 'hook-cli.js' : 'main.js');
if (!fs.existsSync(entry)) {
  // Named by its path: this may run from another directory (a global install links here).
  const root = path.join(__dirname, '..');
  console.error(`tollgate: not built yet. Run \`npm run build\` in ${root} (npm install and npm start do it for you).`);
  process.exit(1);
}
if (hook) {
  require(entry).hookMain();
} else {
  require('reflect-metadata');
  require(entry).main();
}
