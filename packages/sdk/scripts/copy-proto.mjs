#!/usr/bin/env node
// Copies the repository's proto (proto/tollgate/v1/tollgate.proto) into packages/sdk/proto/, which the package
// ships ("files") and the gRPC watch loads (src/grpc-watch.ts). Run by the root `npm run build`.
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdk = join(dirname(fileURLToPath(import.meta.url)), '..');
const from = join(sdk, '..', '..', 'proto', 'tollgate', 'v1', 'tollgate.proto');
const to = join(sdk, 'proto', 'tollgate', 'v1', 'tollgate.proto');
mkdirSync(dirname(to), { recursive: true });
copyFileSync(from, to);
