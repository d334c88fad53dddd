import { invalid } from '@lib/platform';

/** `limit` (or another count) query parameter: default when absent, 400 outside 1..max. */
export function pageLimit(raw: string | undefined, fallback: number, max: number, name = 'limit'): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max) throw invalid('request.invalid', `${name} must be an integer from 1 to ${max}`, { [name]: `must be an integer from 1 to ${max}` });
  return n;
}

export function pageOffset(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 0;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw invalid('request.invalid', 'offset must be a non-negative integer', { offset: 'must be a non-negative integer' });
  return n;
}

/** An opaque `page_key` for lists served from memory: it carries the offset of the next page. */
export const offsetPageKey = (offset: number): string => Buffer.from(JSON.stringify({ offset })).toString('base64url');

/** The offset an `offsetPageKey` carries (0 without a key); a key this list did not return is a 400. */
export function offsetOfPageKey(raw: string | undefined): number {
  if (!raw) return 0;
  try {
    const { offset } = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { offset?: unknown };
    if (Number.isInteger(offset) && (offset as number) >= 0) return offset as number;
  } catch {
    // falls through to the 400 below
  }
  throw invalid('request.invalid', 'page_key is not a key this list returned', { page_key: 'unknown page key' });
}
