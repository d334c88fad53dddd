import { maskUrlCredentials } from '@lib/platform';

/** Field names whose values never leave the service, even to owners reading the event log. */
const HIDDEN = new Set(['digest', 'secretDigest', 'secret_digest']);

/** A copy of event data with credential digests replaced by `****` and URL credentials masked. */
export function redact(value: unknown): unknown {
  // URL credentials in any string, e.g. a model uri stored before such uris were refused.
  if (typeof value === 'string') return maskUrlCredentials(value);
  if (Array.isArray(value)) return value.map(redact);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, HIDDEN.has(k) ? '****' : redact(v)]));
}
