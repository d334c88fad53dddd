import type { Request, Response } from 'express';
import { MulterError } from 'multer';
import { DomainError, invalid } from '@lib/platform';
import { checkJsonShape } from './json-shape';

/** A JSON-valued form field of a multipart request (`metadata`, `messages`…): once at most, valid JSON, bounded shape. */
export function jsonFormField(form: Record<string, unknown>, name: string): unknown {
  const raw = form[name];
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string') throw invalid('request.invalid', `${name} must be given once`, { [name]: 'given more than once' });
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw invalid('request.invalid', `${name} must be JSON`, { [name]: 'not valid JSON' });
  }
  checkJsonShape(value, name);
  return value;
}

/** How a route words multer's refusals: a file too large, and a file part it does not take. */
export interface MultipartErrors {
  readonly tooLarge: () => DomainError;
  readonly unexpectedFile: (field: string | undefined) => DomainError;
}

/**
 * Runs a multer middleware (the guard has authorised the caller already) and turns its failures into the
 * reference API's errors: 413 for a file over the limit, 400 for the rest.
 */
export function runMultipart(parse: (req: Request, res: Response, done: (err: unknown) => void) => void, req: Request, res: Response, errors: MultipartErrors): Promise<void> {
  return new Promise((resolve, reject) =>
    parse(req, res, (err: unknown) => {
      if (!err) return resolve();
      if (err instanceof MulterError) {
        if (err.code === 'LIMIT_FILE_SIZE') return reject(errors.tooLarge());
        if (err.code === 'LIMIT_FILE_COUNT' || err.code === 'LIMIT_UNEXPECTED_FILE') return reject(errors.unexpectedFile(err.field));
        return reject(invalid('upload.malformed', `Malformed upload: ${err.message}`, { body: err.message }));
      }
      return reject(invalid('upload.malformed', `Malformed multipart body: ${(err as Error).message}`, { body: 'malformed multipart body' }));
    }),
  );
}
