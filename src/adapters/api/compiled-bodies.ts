import Ajv, { type ValidateFunction } from 'ajv';
import type { MetadataStorage } from 'class-transformer/types/MetadataStorage';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import { ProposeToolCallsRequest, ResultRequest } from './dto/tool-call.dto';

// Where @Type() records nested classes; the package exports it at runtime but declares it only under types/.
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as {
  defaultMetadataStorage: MetadataStorage;
};

type Ctor = new () => object;
type Schema = { properties?: Record<string, unknown>; additionalProperties?: unknown; [k: string]: unknown };

/**
 * The hot path's bodies, validated by JSON Schemas compiled once (ajv) from the same class-validator decorators.
 * A fast path only: what it accepts, class-validator accepts too (a differential property test holds it to
 * that), so anything it refuses goes on to `parseBody`'s class-validator pass, which names every fault as
 * before. The gain is the common case, a valid body, without class-transformer's copy and per-decorator checks.
 */
function compile(...dtos: Ctor[]): Map<Ctor, ValidateFunction> {
  const schemas = validationMetadatasToSchemas({
    classTransformerMetadataStorage: defaultMetadataStorage,
    refPointerPrefix: '#/definitions/',
  }) as Record<string, Schema>;
  // class-validator runs with forbidNonWhitelisted: a documented object takes no other member. Free JSON
  // (`arguments`, `output`) has no `properties` of its own and stays open.
  const definitions = Object.fromEntries(
    Object.entries(schemas).map(([name, s]) => [name, s.properties ? { ...s, additionalProperties: false } : s]),
  );
  const ajv = new Ajv({ allErrors: false, strict: false });
  return new Map(
    dtos.map((dto) => {
      if (!definitions[dto.name]) throw new Error(`no JSON Schema for ${dto.name}`);
      return [dto, ajv.compile({ definitions, $ref: `#/definitions/${dto.name}` })];
    }),
  );
}

const compiled = compile(ProposeToolCallsRequest, ResultRequest);

/** Whether the compiled schema of `dto` takes `raw` as it is (false: let class-validator judge it). */
export function fastAccepts(dto: Ctor): (raw: unknown) => boolean {
  const validate = compiled.get(dto);
  if (!validate) throw new Error(`${dto.name} has no compiled schema`);
  return (raw) => validate(raw) === true;
}
