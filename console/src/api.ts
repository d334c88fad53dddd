/**
 * The console's only way to the service: the public `/v2/...` routes with the signed-in credential. The
 * credential lives in sessionStorage (gone when the tab closes, never in a URL, never in localStorage where
 * every later visitor of the browser profile would find it).
 */
export interface Credential {
  readonly kind: 'key' | 'token';
  readonly value: string;
  /** What the header shows: never the secret itself. */
  readonly label: string;
}

const STORE = 'ars-console-credential';

export function loadCredential(): Credential | undefined {
  try {
    const raw = sessionStorage.getItem(STORE);
    return raw ? (JSON.parse(raw) as Credential) : undefined;
  } catch {
    return undefined;
  }
}

export const saveCredential = (c: Credential) => sessionStorage.setItem(STORE, JSON.stringify(c));
export const clearCredential = () => sessionStorage.removeItem(STORE);

/** The reference error body, kept whole so forms can show each field's error beside the field. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly messages: string[],
    readonly fieldErrors: Record<string, string> = {},
  ) {
    super(messages.join('; ') || `HTTP ${status}`);
  }
}

/** The service refused the credential this (403): the console then shows what the credential may not do, once. */
export const forbidden = (e: unknown): boolean => e instanceof ApiError && e.status === 403;

export function authHeaders(c = loadCredential()): Record<string, string> {
  if (!c) return {};
  return c.kind === 'key' ? { 'x-api-key': c.value } : { authorization: `Bearer ${c.value}` };
}

async function failure(res: Response): Promise<ApiError> {
  const text = await res.text();
  try {
    const body = JSON.parse(text) as { messages?: string[]; field_errors?: Record<string, string> };
    return new ApiError(res.status, body.messages ?? [text], body.field_errors);
  } catch {
    return new ApiError(res.status, [text || res.statusText]);
  }
}

/** One JSON call; anything but 2xx is an ApiError. A 401 signs the user out (a revoked key, an expired token). */
export async function api<T = any>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const res = await fetch(path, {
    method,
    signal,
    headers: { ...authHeaders(), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) {
    const error = await failure(res);
    if (res.status === 401) window.dispatchEvent(new CustomEvent('console:unauthorized', { detail: error.message }));
    throw error;
  }
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

export interface SseMessage {
  readonly event: string;
  readonly id?: string;
  readonly data: any;
}

/**
 * Server-sent events over fetch, since EventSource cannot send the key header. Yields each event with its
 * data parsed; ends when the server ends the stream or `signal` aborts.
 */
export async function* sse(method: string, path: string, body?: unknown, signal?: AbortSignal): AsyncGenerator<SseMessage> {
  const res = await fetch(path, {
    method,
    signal,
    headers: { ...authHeaders(), accept: 'text/event-stream', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok || !res.body) throw await failure(res);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      let id: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('id:')) id = line.slice(3).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (!data.length) continue;
      const raw = data.join('\n');
      let parsed: unknown = raw;
      try {
        parsed = JSON.parse(raw);
      } catch {
        /* `[DONE]` and other plain data stay text */
      }
      yield { event, id, data: parsed };
    }
  }
}

/** A multipart upload with progress (fetch reports no upload progress; XMLHttpRequest does). */
export function upload(path: string, form: FormData, onProgress: (fraction: number) => void): Promise<any> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path);
    for (const [k, v] of Object.entries(authHeaders())) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onerror = () => reject(new ApiError(0, ['The upload failed: the service did not answer']));
    xhr.onload = () => {
      let body: any;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = { messages: [xhr.responseText] };
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body);
      else reject(new ApiError(xhr.status, body.messages ?? [], body.field_errors));
    };
    xhr.send(form);
  });
}

/** Query-string builder that leaves out empty values. */
export function qs(params: Record<string, string | number | boolean | undefined>): string {
  const entries = Object.entries(params).filter(([, v]) => v !== undefined && v !== '');
  return entries.length ? `?${new URLSearchParams(entries.map(([k, v]) => [k, String(v)])).toString()}` : '';
}
