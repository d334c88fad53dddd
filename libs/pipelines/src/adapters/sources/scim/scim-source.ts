import type { SourceFetchJob } from '../source-job';
import type { FetchedRecord, PageVersion } from '../../../domain/pipeline-run';
import type { ScimSourceSettings } from '../../../domain/pipeline-scim-source';
import { readUpTo } from '@lib/platform';

/** What a run gives the SCIM source: the guarded fetch, the credential's headers, what it already has. */
export type ScimFetchJob = Pick<SourceFetchJob<ScimSourceSettings>, 'source' | 'fetch' | 'headers' | 'only' | 'known' | 'versions' | 'signal' | 'onRecord'>;

/** One answer's bound: a provider that sends more in one page is refused rather than buffered without end. */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
const LIST_RESPONSE = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
type Resource = Record<string, unknown> & { id?: unknown; meta?: { version?: unknown; lastModified?: unknown } };

/** `meta.version` (kept as `etag`) and `meta.lastModified` of a resource, the two things incremental sync compares. */
const versionOf = (r: Resource): PageVersion => ({ ...(typeof r.meta?.version === 'string' ? { etag: r.meta.version } : {}), ...(typeof r.meta?.lastModified === 'string' ? { lastModified: r.meta.lastModified } : {}) });
const unchanged = (before: PageVersion | undefined, now: PageVersion): boolean => !!before && (now.etag !== undefined ? before.etag === now.etag : now.lastModified !== undefined && before.lastModified === now.lastModified);

/** The latest `lastModified` of the last sync, as the provider wrote it (its clock, not ours): the next run asks for what is newer. */
export function highWaterMark(versions: Readonly<Record<string, PageVersion>>): string | null {
  let best: { at: number; text: string } | null = null;
  for (const v of Object.values(versions)) {
    const at = v.lastModified ? Date.parse(v.lastModified) : NaN;
    if (!Number.isNaN(at) && (!best || at > best.at)) best = { at, text: v.lastModified! };
  }
  return best?.text ?? null;
}

/** A resource as readable lines (`name.givenName: Ada`), `schemas` and `meta` left out; extension URNs shortened to their last part. */
export function renderResource(resource: Resource): string {
  const out: string[] = [];
  const walk = (v: unknown, path: string): void => {
    if (v === null || v === undefined || v === '') return;
    if (Array.isArray(v)) return v.forEach((x) => walk(x, path));
    if (typeof v !== 'object') return void out.push(`${path}: ${String(v)}`);
    for (const [k, x] of Object.entries(v)) {
      if (!path && (k === 'schemas' || k === 'meta')) continue;
      const name = k.startsWith('urn:') ? k.slice(k.lastIndexOf(':') + 1) : k;
      walk(x, path ? `${path}.${name}` : name);
    }
  };
  walk(resource, '');
  return out.join('\n');
}

async function readCapped(res: Response, url: string): Promise<string> {
  const { bytes, truncated } = await readUpTo(res, MAX_ANSWER_BYTES);
  if (truncated) throw new Error(`GET ${url} answered more than 32 MiB at once; lower page_size`);
  return bytes.toString('utf8');
}

function toRecord(r: Resource): FetchedRecord {
  const title = [r.displayName, r.userName].find((x): x is string => typeof x === 'string' && x.length > 0) ?? null;
  return { recordId: String(r.id), title, text: renderResource(r), metadata: { scim_resource_type: 'User', scim: r } };
}

/**
 * Reads a SCIM 2.0 provider's Users (RFC 7644 §3.4.2): `GET {base_url}/Users` with `filter`, `attributes`,
 * paged by `startIndex`/`count` until `totalResults`. Incremental sync (docs/pipelines.md, The SCIM source):
 * `last_modified_filter` asks only for `meta.lastModified gt "<high-water mark>"`; `client_side` lists all and
 * skips users whose `meta.version` (else `meta.lastModified`) is the one last synced.
 */
export async function fetchScimSource(job: ScimFetchJob): Promise<{ fetched: number; seen: Record<string, PageVersion>; complete: boolean }> {
  const { source, signal } = job;
  const get = async (url: string): Promise<Record<string, unknown> | null> => {
    const res = await job.fetch(url, { headers: { accept: 'application/scim+json, application/json', ...job.headers }, signal, redirect: 'error' });
    const text = await readCapped(res, url.split('?')[0]);
    if (res.status === 404 && job.only) return null;
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      if (res.ok) throw new Error(`GET ${url.split('?')[0]} did not answer SCIM JSON`);
    }
    if (!res.ok) throw new Error(`GET ${url.split('?')[0]} answered ${res.status}${typeof body.detail === 'string' ? `: ${body.detail.slice(0, 300)}` : ''}`);
    return body;
  };
  let fetched = 0;
  const take = async (r: Resource): Promise<void> => {
    if (typeof r.id !== 'string' || !r.id) return; // Not a resource a record can name.
    if (job.known.has(r.id)) return;
    fetched++;
    await job.onRecord(toRecord(r));
  };

  if (job.only) {
    for (const id of job.only) if (!signal.aborted) await get(`${source.base_url}/Users/${encodeURIComponent(id)}`).then((r) => (r ? take(r as Resource) : undefined));
    return { fetched, seen: {}, complete: false };
  }
  const strategy = job.versions ? source.incremental_strategy : null;
  const mark = strategy === 'last_modified_filter' ? highWaterMark(job.versions!) : null;
  const since = mark ? `meta.lastModified gt "${mark.replace(/["\\]/g, '')}"` : null;
  const filter = source.filter && since ? `(${source.filter}) and ${since}` : (since ?? source.filter);
  // `meta` is asked for with a chosen attribute list: incremental sync needs its version and lastModified.
  const attributes = source.attributes.length ? [...new Set([...source.attributes, 'meta'])] : [];
  // Under the filter only changed users come back: the others keep their last version (none can be found gone).
  const seen: Record<string, PageVersion> = strategy === 'last_modified_filter' ? { ...job.versions } : {};
  for (let start = 1; !signal.aborted; ) {
    const q = new URLSearchParams({ ...(filter ? { filter } : {}), ...(attributes.length ? { attributes: attributes.join(',') } : {}), startIndex: String(start), count: String(source.page_size) });
    const page = (await get(`${source.base_url}/Users?${q}`))!;
    if (!Array.isArray(page.schemas) || !page.schemas.includes(LIST_RESPONSE)) throw new Error(`GET ${source.base_url}/Users did not answer a SCIM ListResponse`);
    const resources = (Array.isArray(page.Resources) ? page.Resources : []) as Resource[];
    for (const r of resources) {
      if (signal.aborted || typeof r.id !== 'string') continue;
      const version = versionOf(r);
      const before = job.versions?.[r.id];
      seen[r.id] = version;
      if (strategy === 'client_side' && unchanged(before, version)) continue;
      await take(r);
    }
    start += resources.length;
    const total = typeof page.totalResults === 'number' ? page.totalResults : 0;
    if (!resources.length || start > total) return { fetched, seen, complete: !signal.aborted };
  }
  return { fetched, seen, complete: false };
}
