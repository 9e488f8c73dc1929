#!/usr/bin/env node
'use strict';
// The built CLI (npm install and npm start build it into dist/).
const path = require('node:path');
const fs = require('node:fs');
const entry = path.join(__dirname, '..', 'dist', 'src', 'adapters', 'cli', 'main.js');
if (!fs.existsSync(entry)) {
  // Named by its path: this may run from another directory (a global install links here).
  const root = path.join(__dirname, '..');
  console.error(`tollgate: not built yet. Run \`npm run build\` in ${root} (npm install and npm start do it for you).`);
  process.exit(1);
}
require('reflect-metadata');
require(entry).main();
