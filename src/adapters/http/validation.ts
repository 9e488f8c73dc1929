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
  const instance = plainToInstance(dto, raw);
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true, stopAtFirstError: true });
  if (errors.length > 0) throw new ValidationError(flatten(errors, ''));
  return instance;
}

function flatten(errors: CvError[], prefix: string): ValidationFault[] {
  const out: ValidationFault[] = [];
  for (const e of errors) {
    const path = prefix ? (/^\d+$/.test(e.property) ? `${prefix}[${e.property}]` : `${prefix}.${e.property}`) : e.property;
    if (e.constraints) {
      const unknown = e.constraints.whitelistValidation;
      out.push({ path, message: unknown ? `unknown field "${e.property}"` : Object.values(e.constraints)[0].replace(/^\S+ /, '') });
    }
    if (e.children?.length) out.push(...flatten(e.children, path));
  }
  return out;
}
