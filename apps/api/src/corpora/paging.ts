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
