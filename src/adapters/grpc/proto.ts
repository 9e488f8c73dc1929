import { loadSync, Options, PackageDefinition, ServiceDefinition } from '@grpc/proto-loader';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import protobuf from 'protobufjs';

export const TOLLGATE_SERVICE = 'tollgate.v1.Tollgate';
export const TOLLGATE_PROTO = 'tollgate/v1/tollgate.proto';

/**
 * How the server reads requests: lowerCamelCase names (as REST's JSON), enums by name, 64-bit numbers as strings,
 * `kind` set on each google.protobuf.Value, and no defaults filled in, so that a member left out stays absent
 * exactly as in a REST body.
 */
const SERVER_OPTIONS: Options = { keepCase: false, longs: String, enums: String, defaults: false, oneofs: true };

/**
 * JSON is two messages a level in a google.protobuf.Struct (a Struct, a Value). protobufjs stops at 100 nested
 * messages (protoc's default), about 50 levels: fewer than the 64 REST takes, so a call proposed over REST could
 * not even be answered over gRPC. Raised so that any JSON REST takes fits in any message that carries it; the
 * 64-level bound itself is checked with the request, as REST checks it.
 */
const NESTED_MESSAGES = 200;
protobuf.util.recursionLimit = Math.max(protobuf.util.recursionLimit, NESTED_MESSAGES);
protobuf.Reader.recursionLimit = Math.max(protobuf.Reader.recursionLimit, NESTED_MESSAGES);

/** The repository's proto/ directory, found upwards of this file (src/adapters/grpc in tests, dist/src/adapters/grpc built). */
export function protoDir(from = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'proto', TOLLGATE_PROTO))) return join(dir, 'proto');
    if (dirname(dir) === dir) throw new Error(`proto/${TOLLGATE_PROTO} not found above ${from}`);
  }
}

export function loadTollgateProto(options: Options = SERVER_OPTIONS): {
  definition: PackageDefinition;
  service: ServiceDefinition;
} {
  const definition = loadSync(TOLLGATE_PROTO, { ...options, includeDirs: [protoDir()] });
  return { definition, service: definition[TOLLGATE_SERVICE] as ServiceDefinition };
}

/** For reflection: field names as the .proto spells them (snake_case), which is what grpcurl shows and expects. */
export function loadForReflection(file: string, includeDirs: string[] = []): PackageDefinition {
  return loadSync(file, { ...SERVER_OPTIONS, keepCase: true, includeDirs });
}
