import { plainToInstance } from 'class-transformer';
import { ValidationError as CvError, validateSync } from 'class-validator';
import { ValidationError, ValidationFault } from '../../domain/shared/domain-error';

type Ctor<T> = new () => T;

/**
 * Validates a request body against its DTO: unknown fields are refused at every documented
 * level (free JSON like `arguments` is left alone) and each fault names its path.
 */
export function parseBody<T extends object>(dto: Ctor<T>, raw: unknown): T {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ValidationError([{ path: '', message: 'the body must be a JSON object' }]);
  }
  const nul = findNul(raw, '');
  if (nul !== null) throw new ValidationError([{ path: nul, message: 'text may not contain the NUL character (\\u0000)' }]);
  const instance = plainToInstance(dto, raw);
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true });
  if (errors.length > 0) throw new ValidationError(flatten(errors, ''));
  return instance;
}

function flatten(errors: CvError[], prefix: string): ValidationFault[] {
  const out: ValidationFault[] = [];
  for (const e of errors) {
    const path = prefix ? (/^\d+$/.test(e.property) ? `${prefix}[${e.property}]` : `${prefix}.${e.property}`) : e.property;
    if (e.constraints) {
      const unknown = e.constraints.whitelistValidation;
      out.push({ path, message: unknown ? `unknown field "${e.property}"` : firstMessage(e.constraints).replace(/^\S+ /, '') });
    }
    if (e.children?.length) out.push(...flatten(e.children, path));
  }
  return out;
}

/** The type of a value is wrong before its length or range is: say that first. */
const FIRST = ['isDefined', 'isObject', 'isArray', 'isString', 'isBoolean', 'isNumber', 'isIn', 'matches'];

function firstMessage(constraints: Record<string, string>): string {
  const key = FIRST.find((k) => k in constraints) ?? Object.keys(constraints)[0];
  return constraints[key];
}

/** PostgreSQL text and jsonb cannot hold U+0000: find the first string (or key) with one, anywhere. */
function findNul(v: unknown, path: string): string | null {
  if (typeof v === 'string') return v.includes('\u0000') ? path || '(body)' : null;
  if (v === null || typeof v !== 'object') return null;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const hit = findNul(v[i], `${path}[${i}]`);
      if (hit !== null) return hit;
    }
    return null;
  }
  for (const [k, child] of Object.entries(v)) {
    const p = path ? `${path}.${k}` : k;
    if (k.includes('\u0000')) return p;
    const hit = findNul(child, p);
    if (hit !== null) return hit;
  }
  return null;
}
