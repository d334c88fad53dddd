/**
 * Whether a node-postgres error means the database could not be reached or went away (the server restarting, the
 * network cut), as opposed to a failed statement: those become 503 `unavailable` with Retry-After, and a caller may
 * retry. SQLSTATE classes 08 (connection exception) and 57P01–57P03 (admin/crash shutdown, cannot connect now), the
 * socket errors, and the driver's own "Connection terminated" messages.
 */
export function isConnectionError(e: unknown): boolean {
  if (!e || typeof e !== 'object') return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03') return true;
    if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN'].includes(code)) return true;
  }
  const message = (e as { message?: unknown }).message;
  return typeof message === 'string' && /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended/i.test(message);
}
