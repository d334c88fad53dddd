import { validateSync, ValidationError, ValidatorOptions } from 'class-validator';
import { DomainError, yieldToLoop } from '@lib/platform';
import { nestedTypeOf, toDto, TooManyElements } from './dto';
import { rememberValidationRules } from './validation-rules';

rememberValidationRules();

/**
 * Flattens class-validator errors into `field_errors`, keyed by the dotted path of the offending field. A field
 * that is absent but required says so ("name is required"), not every constraint a value would have to meet; a
 * field that is present and wrong lists the constraints it breaks.
 */
export function fieldErrors(errors: ValidationError[], prefix = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of errors) {
    const path = prefix ? `${prefix}.${e.property}` : e.property;
    if (e.constraints) out[path] = e.value === undefined ? `${path} is required` : Object.values(e.constraints).join('; ');
    if (e.children?.length) Object.assign(out, fieldErrors(e.children, path));
  }
  return out;
}

export function validationError(errors: Record<string, string>): DomainError {
  const first = Object.entries(errors)[0];
  return new DomainError('invalid', 'request.invalid', first ? `Invalid ${first[0]}: ${first[1]}` : 'Invalid request', { fieldErrors: errors });
}

const BODY_OPTIONS: ValidatorOptions = { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true };

function requireObject(body: unknown): asserts body is Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new DomainError('invalid', 'request.invalid', 'The request body must be a JSON object', { fieldErrors: { body: 'must be a JSON object' } });
  }
}

/**
 * Validates a plain body against a DTO class: unknown fields are rejected (no mass assignment). `prefix` names
 * where the value sits (a multipart form's JSON field), so field errors carry the whole path.
 */
export function validateBody<T extends object>(cls: new () => T, body: unknown, prefix = ''): T {
  requireObject(body);
  const { instance, errors } = checkDto(cls, body, BODY_OPTIONS);
  if (Object.keys(errors).length) throw validationError(prefix ? Object.fromEntries(Object.entries(errors).map(([k, v]) => [`${prefix}.${k}`, v])) : errors);
  return instance;
}

/**
 * The DTO built from a body and its field errors (not thrown: some callers add checks of their own). An array
 * past its `@ArrayMaxSize` is reported before any of its elements is validated.
 */
export function checkDto<T extends object>(cls: new () => T, body: Record<string, unknown>, options: ValidatorOptions = {}): { instance: T; errors: Record<string, string> } {
  const built = buildDto(cls, body);
  if ('errors' in built) return { instance: undefined as unknown as T, errors: built.errors };
  return { instance: built.instance, errors: fieldErrors(validateSync(built.instance, options)) };
}

/** The DTO built from a body, or the error of an array past its `@ArrayMaxSize` (found before any element is validated). */
function buildDto<T extends object>(cls: new () => T, body: Record<string, unknown>): { instance: T } | { errors: Record<string, string> } {
  try {
    return { instance: toDto(cls, body) };
  } catch (e) {
    if (e instanceof TooManyElements) return { errors: { [e.path]: e.message } };
    throw e;
  }
}

/** Nested elements validated between two turns of the event loop. */
const ELEMENTS_PER_TURN = 500;

/**
 * `validateBody` for a body that may hold tens of thousands of nested DTOs (a document's parts or sections): the
 * same checks and field errors, but the elements of a long array of nested DTOs after its first are validated a
 * slice at a time with a turn of the event loop between (class-validator is synchronous: a document of 20,000
 * parts held every other request ~0.5 s). The rest of the body, the array's own constraints and its first element
 * are validated as one, as `validateBody` does; the other elements' errors follow theirs (the same errors, listed
 * in another order when both have some).
 */
export async function validateBodyInSlices<T extends object>(cls: new () => T, body: unknown): Promise<T> {
  requireObject(body);
  const built = buildDto(cls, body);
  if ('errors' in built) throw validationError(built.errors);
  const { instance } = built;
  const fields = instance as Record<string, unknown>;
  const long = Object.entries(fields).filter((entry): entry is [string, object[]] => {
    const [key, value] = entry;
    const type = nestedTypeOf(cls, key);
    return Array.isArray(value) && value.length > ELEMENTS_PER_TURN && type !== undefined && value.every((v) => v instanceof type);
  });
  for (const [key, elements] of long) fields[key] = elements.slice(0, 1);
  const errors = fieldErrors(validateSync(instance, BODY_OPTIONS));
  for (const [key, elements] of long) fields[key] = elements;
  for (const [key, elements] of long) {
    for (let from = 1; from < elements.length; from += ELEMENTS_PER_TURN) {
      await yieldToLoop();
      elements.slice(from, from + ELEMENTS_PER_TURN).forEach((element, j) => Object.assign(errors, fieldErrors(validateSync(element, BODY_OPTIONS), `${key}.${from + j}`)));
    }
  }
  if (Object.keys(errors).length) throw validationError(errors);
  return instance;
}
