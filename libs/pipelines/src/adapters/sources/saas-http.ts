import type { PipelineSource } from '../../domain/pipeline';
import type { SourceFetchJob } from './source-job';
import { Logger } from '@nestjs/common';
import type { ExtractedDocument } from '@lib/extraction';
import { formatOf } from '@lib/extraction';
import { readUpTo } from '@lib/platform';
import type { FetchedRecord, PageVersion } from '../../domain/pipeline-run';
import { documentText } from './extract-text';

/**
 * What the SaaS file sources (sharepoint, google_drive, box) share: their cloud's fixed hosts (overridable by
 * environment so tests point them at 127.0.0.1), throttling honoured with a bound, bounded JSON reads, cached
 * access tokens, and a file turned into text by the extraction library.
 */

const log = new Logger('pipelines');

/** What a run gives a SaaS source. */
export type SaasFetchJob<S extends PipelineSource> = Pick<SourceFetchJob<S>, 'source' | 'fetch' | 'secrets' | 'only' | 'known' | 'versions' | 'signal' | 'onRecord' | 'extract' | 'env'>;

export interface SaasFetchResult {
  readonly fetched: number;
  readonly seen: Record<string, PageVersion>;
  readonly complete: boolean;
}

/** A JSON answer of a listing is read up to this; a file up to `MAX_FILE_BYTES` (bigger ones are skipped). */
const MAX_JSON_BYTES = 32 * 1024 * 1024;
export const MAX_FILE_BYTES = 50 * 1024 * 1024;
/** Throttling (429, 503): at most this many waits per request, each at most this long; past it the run fails. */
const MAX_THROTTLE_WAITS = 4;
const MAX_RETRY_AFTER_S = 60;

/** A fixed host of a cloud API: the environment's value (`name`) or the real one; a bad value fails the run naming it. */
export function serviceUrl(env: Readonly<Record<string, string | undefined>>, name: string, fallback: string): string {
  const v = env[name]?.trim() || fallback;
  try {
    const u = new URL(v);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error();
  } catch {
    throw new Error(`${name} must be an http(s) URL`);
  }
  return v.replace(/\/+$/, '');
}

const sleep = (ms: number, signal: AbortSignal) => new Promise<void>((r) => (signal.aborted ? r() : (setTimeout(r, ms).unref(), signal.addEventListener('abort', () => r(), { once: true }))));

/** Seconds a `Retry-After` asks for (delta-seconds or an HTTP date); 1 when absent or unreadable. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number {
  if (!value) return 1;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? 1 : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * A request through the guarded fetch; a 429 or 503 (or an answer `throttled` recognises, e.g. Drive's 403
 * `userRateLimitExceeded`) is waited out as `Retry-After` says, else 1, 2, 4… s, a few times, each wait bounded.
 */
export async function send(job: Pick<SaasFetchJob<PipelineSource>, 'fetch' | 'signal'>, url: string, init: RequestInit = {}, throttled?: (res: Response) => Promise<boolean>): Promise<Response> {
  for (let waits = 0; ; waits++) {
    const res = await job.fetch(url, { ...init, signal: job.signal });
    const limited = res.status === 429 || res.status === 503 || (!res.ok && !!throttled && (await throttled(res)));
    if (!limited || waits >= MAX_THROTTLE_WAITS) return res;
    const seconds = res.headers.has('retry-after') ? retryAfterSeconds(res.headers.get('retry-after')) : 2 ** waits;
    await res.body?.cancel();
    if (seconds > MAX_RETRY_AFTER_S) throw new Error(`${new URL(url).pathname} is throttled for ${seconds} s (more than ${MAX_RETRY_AFTER_S} s)`);
    await sleep(seconds * 1000, job.signal);
    if (job.signal.aborted) return res;
  }
}

/** A JSON answer, bounded; a non-2xx answer is an error naming the path, the status and the API's own short message. */
export async function readJson<T = Record<string, unknown>>(res: Response, what: string, message: (body: Record<string, unknown>) => unknown = () => undefined): Promise<T> {
  const { bytes, truncated } = await readUpTo(res, MAX_JSON_BYTES);
  if (truncated) throw new Error(`${what} answered more than 32 MiB at once`);
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  } catch {
    if (res.ok) throw new Error(`${what} did not answer JSON`);
  }
  if (!res.ok) {
    const m = message(body);
    throw new Error(`${what} answered ${res.status}${typeof m === 'string' && m ? `: ${m.slice(0, 300)}` : ''}`);
  }
  return body as T;
}

/** An access token reused until a minute before it expires; minted again once (one mint for concurrent callers). */
export function tokenCache(mint: () => Promise<{ token: string; expiresIn: number }>): () => Promise<string> {
  let cached: { token: string; until: number } | undefined;
  let pending: Promise<{ token: string; until: number }> | undefined;
  return async () => {
    if (!cached || Date.now() >= cached.until) {
      pending ??= mint()
        .then((t) => ({ token: t.token, until: Date.now() + Math.max(0, t.expiresIn - 60) * 1000 }))
        .finally(() => (pending = undefined));
      cached = await pending;
    }
    return cached.token;
  };
}

/** Whether the extraction library reads a file of this name (by extension); otherwise the file is skipped, not downloaded. */
export const readable = (name: string): boolean => formatOf(name, Buffer.alloc(0)) !== undefined;

/**
 * A downloaded file as text through the extraction library, or null when it cannot be read (corrupt, empty, too
 * large…): the file is skipped with its reason in the log, the run goes on.
 */
export async function fileText(job: Pick<SaasFetchJob<PipelineSource>, 'extract'>, bytes: Buffer, name: string, recordId: string): Promise<string | null> {
  try {
    return documentText(await job.extract(bytes, name));
  } catch (e) {
    skipped(recordId, `its text could not be extracted (${(e as Error).message.slice(0, 200)})`);
    return null;
  }
}

/** A file left out of the run and why (type not readable, too large, unreadable): in the service log, never a crash. */
export function skipped(recordId: string, reason: string): void {
  log.warn(`pipeline source: file ${recordId} skipped: ${reason}`);
}

/** A file's bytes, bounded: one past `MAX_FILE_BYTES` is skipped (null). Redirects to the storage host are followed (fetch drops `Authorization` across origins). */
export async function download(job: Pick<SaasFetchJob<PipelineSource>, 'fetch' | 'signal'>, url: string, headers: Record<string, string>, recordId: string, what: string, throttled?: (res: Response) => Promise<boolean>): Promise<Buffer | null> {
  const res = await send(job, url, { headers, redirect: 'follow' }, throttled);
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`${what} answered ${res.status}`);
  }
  const { bytes, truncated } = await readUpTo(res, MAX_FILE_BYTES);
  if (truncated) {
    skipped(recordId, `larger than ${MAX_FILE_BYTES} bytes`);
    return null;
  }
  return bytes;
}
