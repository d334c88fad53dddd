import { validateSync, ValidationError, ValidatorOptions } from 'class-validator';
import { DomainError } from '@lib/platform';
import { toDto, TooManyElements } from './dto';
import { rememberValidationRules } from './validation-rules';

rememberValidationRules();

/** Flattens class-validator errors into `field_errors`, keyed by the dotted path of the offending field. */
export function fieldErrors(errors: ValidationError[], prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of errors) {
    const path = prefix ? `${prefix}.${e.property}` : e.property;
    if (e.constraints) out[path] = Object.values(e.constraints).join('; ');
    if (e.children?.length) Object.assign(out, fieldErrors(e.children, path));
  }
  return out;
}

export function validationError(errors: Record<string, string>): DomainError {
  const first = Object.entries(errors)[0];
  return new DomainError('invalid', 'request.invalid', first ? `Invalid ${first[0]}: ${first[1]}` : 'Invalid request', { fieldErrors: errors });
}

/**
 * Validates a plain body against a DTO class: unknown fields are rejected (no mass assignment). `prefix` names
 * where the value sits (a multipart form's JSON field), so field errors carry the whole path.
 */
export function validateBody<T extends object>(cls: new () => T, body: unknown, prefix = ''): T {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new DomainError('invalid', 'request.invalid', 'The request body must be a JSON object', { fieldErrors: { body: 'must be a JSON object' } });
  }
  const { instance, errors } = checkDto(cls, body as Record<string, unknown>, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true });
  if (Object.keys(errors).length) throw validationError(prefix ? Object.fromEntries(Object.entries(errors).map(([k, v]) => [`${prefix}.${k}`, v])) : errors);
  return instance;
}

/**
 * The DTO built from a body and its field errors (not thrown: some callers add checks of their own). An array
 * past its `@ArrayMaxSize` is reported before any of its elements is validated.
 */
export function checkDto<T extends object>(cls: new () => T, body: Record<string, unknown>, options: ValidatorOptions = {}): { instance: T; errors: Record<string, string> } {
  let instance: T;
  try {
    instance = toDto(cls, body);
  } catch (e) {
    if (e instanceof TooManyElements) return { instance: undefined as unknown as T, errors: { [e.path]: e.message } };
    throw e;
  }
  return { instance, errors: fieldErrors(validateSync(instance, options)) };
}
