/** Field names whose values never leave the service, even to owners reading the event log. */
const HIDDEN = new Set(['digest', 'secretDigest', 'secret_digest']);

/** A copy of event data with credential digests replaced by `****`. */
export function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, HIDDEN.has(k) ? '****' : redact(v)]));
}
