import { loadSync, Options, PackageDefinition, ServiceDefinition } from '@grpc/proto-loader';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const TOLLGATE_SERVICE = 'tollgate.v1.Tollgate';
export const TOLLGATE_PROTO = 'tollgate/v1/tollgate.proto';

/**
 * How the server reads requests: lowerCamelCase names (as REST's JSON), enums by name, 64-bit numbers as strings,
 * `kind` set on each google.protobuf.Value, and no defaults filled in, so that a member left out stays absent
 * exactly as in a REST body.
 */
const SERVER_OPTIONS: Options = { keepCase: false, longs: String, enums: String, defaults: false, oneofs: true };

/** The repository's proto/ directory, found upwards of this file (src/adapters/grpc in tests, dist/src/adapters/grpc built). */
export function protoDir(from = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'proto', TOLLGATE_PROTO))) return join(dir, 'proto');
    if (dirname(dir) === dir) throw new Error(`proto/${TOLLGATE_PROTO} not found above ${from}`);
  }
}

export function loadTollgateProto(options: Options = SERVER_OPTIONS): { definition: PackageDefinition; service: ServiceDefinition } {
  const definition = loadSync(TOLLGATE_PROTO, { ...options, includeDirs: [protoDir()] });
  return { definition, service: definition[TOLLGATE_SERVICE] as ServiceDefinition };
}

/** For reflection: field names as the .proto spells them (snake_case), which is what grpcurl shows and expects. */
export function loadForReflection(file: string, includeDirs: string[] = []): PackageDefinition {
  return loadSync(file, { ...SERVER_OPTIONS, keepCase: true, includeDirs });
}
