/**
 * What an upstream client (adapters/) tells the core about a failure, and the helpers every client shares to say
 * it without leaking a credential: the boundary between the LLM clients and the use cases' error mapping
 * (upstream-errors.ts: `upstreamError`).
 */

/** What a thrown upstream error means, whichever SDK threw it. */
export type UpstreamFailure =
  | { readonly kind: 'status'; readonly status: number; readonly message: string }
  | { readonly kind: 'unreachable'; readonly message: string }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'aborted' }
  | { readonly kind: 'other'; readonly message: string };

/** Upstream text is shortened and scrubbed of our own credentials before it reaches a log. */
export function scrub(text: string, secrets: readonly string[], max = 300): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('****');
  return out.length > max ? `${out.slice(0, max)}…` : out;
}

/**
 * Why a connection failed, from an error's cause chain: "fetch failed: connect ECONNREFUSED 127.0.0.1:9"
 * rather than fetch's bare "fetch failed". Starts below the SDK's own wrapper when `skipOwn`.
 */
export function connectionReason(e: unknown, skipOwn = false): string {
  const messages: string[] = [];
  let at = skipOwn ? (e as { cause?: unknown })?.cause : e;
  for (let depth = 0; at && depth < 5; depth++, at = (at as { cause?: unknown }).cause) {
    const message = (at as Error).message;
    if (message && !messages.includes(message)) messages.push(message);
  }
  return messages.join(': ') || String(e);
}
