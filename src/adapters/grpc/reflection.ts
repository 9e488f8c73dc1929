import type { Server } from '@grpc/grpc-js';
import type { PackageDefinition } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { FileDescriptorProto } from 'protobufjs/ext/descriptor';

/**
 * Server reflection (grpc.reflection.v1 and v1alpha), so grpcurl and buf curl work without the proto file.
 *
 * @grpc/proto-loader describes what it loaded as one synthetic file per package (`tollgate_v1.proto`,
 * `google_protobuf.proto`) with no `dependency` list, type names relative to their scope, and map entries not
 * named `<Field>Entry` (grpc/grpc-node#3034). Clients that build a registry from the descriptors, as the Go
 * ones do, refuse that ("failed to find service named …"). The descriptors are repaired here before
 * @grpc/reflection serves them: entries renamed, every type name fully qualified, dependencies listed.
 */
export function addReflection(server: Pick<Server, 'addService'>, definitions: PackageDefinition[]): void {
  new ReflectionService(linkDescriptors(Object.assign({}, ...definitions) as PackageDefinition)).addToServer(server);
}

interface Field {
  name: string;
  typeName?: string;
}
interface Message {
  name: string;
  field?: Field[];
  nestedType?: Message[];
  enumType?: Array<{ name: string }>;
  options?: { mapEntry?: boolean };
}
interface File {
  name: string;
  package?: string;
  dependency?: string[];
  messageType?: Message[];
  enumType?: Array<{ name: string }>;
  service?: Array<{ method?: Array<{ inputType: string; outputType: string }> }>;
}

const pascal = (s: string) =>
  s.replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase()).replace(/^[a-z]/, (c) => c.toUpperCase());

/** Every message of a file with its scope (`tollgate.v1`, `tollgate.v1.Outer`), nested ones included. */
function messagesOf(f: File): Array<{ m: Message; scope: string }> {
  const out: Array<{ m: Message; scope: string }> = [];
  const walk = (m: Message, scope: string) => {
    out.push({ m, scope });
    for (const n of m.nestedType ?? []) walk(n, join(scope, m.name));
  };
  for (const m of f.messageType ?? []) walk(m, f.package ?? '');
  return out;
}

function join(scope: string, name: string): string {
  return scope ? `${scope}.${name}` : name;
}

export function linkDescriptors(def: PackageDefinition): PackageDefinition {
  const files = new Map<string, File>();
  for (const v of Object.values(def)) {
    for (const b of (v as { fileDescriptorProtos?: Buffer[] }).fileDescriptorProtos ?? []) {
      const f = FileDescriptorProto.toObject(FileDescriptorProto.decode(b)) as File;
      if (!files.has(f.name)) files.set(f.name, f);
    }
  }
  const symbols = new Map<string, string>(); // fully qualified type name → its file
  for (const f of files.values()) {
    for (const { m } of messagesOf(f)) {
      for (const fld of m.field ?? []) {
        const entry = (m.nestedType ?? []).find((n) => n.options?.mapEntry && n.name === fld.typeName);
        if (entry) fld.typeName = entry.name = `${pascal(fld.name)}Entry`;
      }
    }
    for (const { m, scope } of messagesOf(f)) {
      symbols.set(join(scope, m.name), f.name);
      for (const e of m.enumType ?? []) symbols.set(join(join(scope, m.name), e.name), f.name);
    }
    for (const e of f.enumType ?? []) symbols.set(join(f.package ?? '', e.name), f.name);
  }
  // Protobuf's scoping: a relative name is looked up from the innermost scope outwards.
  const resolve = (ref: string, scope: string): string => {
    if (ref.startsWith('.')) return ref;
    for (let s = scope; ; s = s.includes('.') ? s.slice(0, s.lastIndexOf('.')) : '') {
      if (symbols.has(join(s, ref))) return `.${join(s, ref)}`;
      if (!s) return ref;
    }
  };
  for (const f of files.values()) {
    const deps = new Set<string>();
    const use = (name: string) => {
      const file = symbols.get(name.replace(/^\./, ''));
      if (file && file !== f.name) deps.add(file);
      return name;
    };
    for (const { m, scope } of messagesOf(f))
      for (const fld of m.field ?? []) if (fld.typeName) fld.typeName = use(resolve(fld.typeName, join(scope, m.name)));
    for (const s of f.service ?? []) {
      for (const m of s.method ?? []) {
        m.inputType = use(resolve(m.inputType, f.package ?? ''));
        m.outputType = use(resolve(m.outputType, f.package ?? ''));
      }
    }
    f.dependency = [...deps];
  }
  const encoded = new Map(
    [...files].map(([name, f]) => [
      name,
      Buffer.from(FileDescriptorProto.encode(FileDescriptorProto.fromObject(f)).finish()),
    ]),
  );
  return Object.fromEntries(
    Object.entries(def).map(([k, v]) => {
      const own = (v as { fileDescriptorProtos?: Buffer[] }).fileDescriptorProtos;
      const name = (b: Buffer) => (FileDescriptorProto.decode(b) as unknown as File).name;
      return [k, own ? { ...v, fileDescriptorProtos: own.map((b) => encoded.get(name(b))!) } : v];
    }),
  ) as PackageDefinition;
}
