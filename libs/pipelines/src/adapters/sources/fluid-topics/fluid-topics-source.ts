import type { SourceFetchJob } from '../source-job';
import { documentText } from '../extract-text';
import type { ExtractFile } from '../file-text';
import type { FetchedRecord, PageVersion } from '../../../domain/pipeline-run';
import type { FluidTopicsSourceSettings } from '../../../domain/pipeline-fluid-topics-source';
import { FluidTopicsApi, Json } from './fluid-topics-http';
import { readHtml } from '../web/web-source';

/** What a run gives the portal source (the registry's job, named here so this file does not import the registry). */
export type FluidTopicsFetchJob = Pick<SourceFetchJob<FluidTopicsSourceSettings>, 'source' | 'fetch' | 'secrets' | 'only' | 'known' | 'versions' | 'signal' | 'onRecord' | 'extract'>;

const MIB = 1024 * 1024;
/** A topic's HTML, a document's file, and a whole map's text: bounds past which an item is cut or skipped. */
const LIMITS = { topicBytes: 10 * MIB, documentBytes: 25 * MIB, mapChars: 32 * MIB, searchPages: 10_000 } as const;

type Filter = { key: string; values: readonly string[] };
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
const metaOf = (item: Json): Record<string, string[]> => Object.fromEntries(((Array.isArray(item.metadata) ? item.metadata : []) as { key?: unknown; values?: unknown }[]).filter((m) => typeof m.key === 'string').map((m) => [m.key as string, (Array.isArray(m.values) ? m.values : []).map(String)]));
/** The item's edition: what incremental sync compares. */
const editionOf = (item: Json): string => str(item.lastEdition) ?? metaOf(item)['ft:lastEdition']?.[0] ?? str(item.lastPublication) ?? '';
const htmlText = (html: Buffer) => readHtml(html.toString('utf8'), 'https://portal.invalid/').text;

/**
 * Reads a Fluid Topics portal (docs/pipelines.md, The document portal source). `maps`: `GET /api/khub/maps`,
 * chosen by `filters` on their metadata (and `id`), each map one record of its topics' text in table-of-contents
 * order; `topics` and `documents`: `POST /api/khub/clustered-search` with `query`, `filters`, `contentLocale`,
 * paged, each TOPIC (its HTML content) or DOCUMENT (its file, through the extraction parsers) one record.
 * Incremental: an item whose edition is the one last synced is not read again.
 */
export async function fetchFluidTopicsSource(job: FluidTopicsFetchJob): Promise<{ fetched: number; seen: Record<string, PageVersion>; complete: boolean }> {
  const { source, signal } = job;
  const api = new FluidTopicsApi(source.base_url, job.secrets.api_key, job.fetch, signal);
  const mapIds = source.filters.id ? new Set(source.filters.id) : null;
  const filters: Filter[] = Object.entries(source.filters).filter(([k]) => k !== 'id').map(([key, values]) => ({ key, values }));
  const only = job.only ? new Set(job.only) : null;
  const seen: Record<string, PageVersion> = {};
  let fetched = 0;
  const consider = async (id: string, edition: string, read: () => Promise<FetchedRecord | null>): Promise<void> => {
    if (signal.aborted || id in seen || (only && !only.has(id))) return;
    seen[id] = { lastModified: edition };
    if ((edition && job.versions?.[id]?.lastModified === edition) || job.known.has(id)) return;
    const record = await read();
    if (!record) return;
    fetched++;
    await job.onRecord(record);
  };

  if (source.content_scope === 'maps') {
    // The spec: under maps the query is ignored; maps are chosen by their metadata and `id`.
    const maps = (await api.json('/api/khub/maps')) as Json[];
    for (const map of Array.isArray(maps) ? maps : []) {
      const id = str(map.id);
      if (!id || (mapIds && !mapIds.has(id)) || !matches(metaOf(map), filters)) continue;
      await consider(id, editionOf(map), () => readMap(api, map, id));
    }
  } else {
    for await (const entry of search(api, source, filters)) {
      const type = String(entry.type ?? '').toUpperCase();
      if (source.content_scope === 'topics' && type === 'TOPIC') {
        const t = (entry.topic ?? {}) as Json;
        if (!str(t.mapId) || !str(t.contentId) || (mapIds && !mapIds.has(String(t.mapId)))) continue;
        await consider(`${t.mapId}/${t.contentId}`, editionOf(t), () => readTopic(api, t));
      } else if (source.content_scope === 'documents' && type === 'DOCUMENT') {
        const d = (entry.document ?? {}) as Json;
        if (str(d.documentId)) await consider(String(d.documentId), editionOf(d), () => readDocument(api, job, d));
      }
    }
  }
  return { fetched, seen: only ? {} : seen, complete: !only && !signal.aborted };
}

const matches = (meta: Record<string, string[]>, filters: readonly Filter[]) => filters.every((f) => (meta[f.key] ?? []).some((v) => f.values.includes(v)));

/** Every entry of every cluster of the clustered search, page by page until `isLastPage`. */
async function* search(api: FluidTopicsApi, source: FluidTopicsSourceSettings, filters: readonly Filter[]): AsyncGenerator<Json> {
  for (let page = 1; page <= LIMITS.searchPages; page++) {
    const body = (await api.json('/api/khub/clustered-search', { query: source.query ?? '', ...(source.content_locale ? { contentLocale: source.content_locale } : {}), filters, paging: { page, perPage: 100 } })) as Json;
    const clusters = (Array.isArray(body.results) ? body.results : []) as { entries?: unknown }[];
    for (const c of clusters) yield* (Array.isArray(c.entries) ? c.entries : []) as Json[];
    if (!clusters.length || (body.paging as { isLastPage?: unknown } | undefined)?.isLastPage !== false) return;
  }
}

async function readTopic(api: FluidTopicsApi, t: Json): Promise<FetchedRecord | null> {
  const html = await api.content(`/api/khub/maps/${encodeURIComponent(String(t.mapId))}/topics/${encodeURIComponent(String(t.contentId))}/content`, LIMITS.topicBytes);
  if (!html) return null;
  const fluid_topics = { scope: 'topics', map_id: t.mapId, content_id: t.contentId, map_title: t.mapTitle ?? null, breadcrumb: t.breadcrumb ?? null, edition: editionOf(t) || null, metadata: metaOf(t) };
  return { recordId: `${t.mapId}/${t.contentId}`, title: str(t.title) ?? null, text: htmlText(html), metadata: { ...(str(t.readerUrl) ? { url: t.readerUrl } : {}), fluid_topics } };
}

/** A map as one record: each topic of its table of contents, depth first, under its title (cut at 32 MiB of text). */
async function readMap(api: FluidTopicsApi, map: Json, id: string): Promise<FetchedRecord> {
  const toc = (await api.json(`/api/khub/maps/${encodeURIComponent(id)}/topics`)) as Json[];
  const parts: string[] = [];
  let size = 0;
  let cut = false;
  const walk = async (nodes: Json[]): Promise<void> => {
    for (const node of nodes) {
      if (cut) return;
      const html = str(node.contentId) ? await api.content(`/api/khub/maps/${encodeURIComponent(id)}/topics/${encodeURIComponent(String(node.contentId))}/content`, LIMITS.topicBytes) : null;
      const part = [str(node.title), html ? htmlText(html) : ''].filter(Boolean).join('\n');
      if (size + part.length > LIMITS.mapChars) cut = true;
      else (parts.push(part), (size += part.length));
      await walk((Array.isArray(node.children) ? node.children : []) as Json[]);
    }
  };
  await walk(Array.isArray(toc) ? toc : []);
  const fluid_topics = { scope: 'maps', map_id: id, edition: editionOf(map) || null, metadata: metaOf(map), ...(cut ? { truncated: true } : {}) };
  return { recordId: id, title: str(map.title) ?? null, text: parts.join('\n\n'), metadata: { ...(str(map.readerUrl) ? { url: map.readerUrl } : {}), fluid_topics } };
}

/** A document's file as text; null (skipped) when gone or of a kind the parsers cannot read. */
async function readDocument(api: FluidTopicsApi, job: FluidTopicsFetchJob, d: Json): Promise<FetchedRecord | null> {
  const file = await api.content(`/api/khub/documents/${encodeURIComponent(String(d.documentId))}/content`, LIMITS.documentBytes).catch((e: Error) => (/larger than/.test(e.message) ? null : Promise.reject(e)));
  if (!file) return null;
  const name = str(d.filename) ?? `${d.documentId}`;
  const text = await (String(d.mimeType ?? '').startsWith('text/html') ? Promise.resolve(htmlText(file)) : job.extract(file, name).then(documentText)).catch(() => null);
  if (text === null) return null;
  const fluid_topics = { scope: 'documents', document_id: d.documentId, filename: name, mime_type: d.mimeType ?? null, edition: editionOf(d) || null, metadata: metaOf(d) };
  return { recordId: String(d.documentId), title: str(d.title) ?? name, text, metadata: { ...(str(d.readerUrl) ? { url: d.readerUrl } : {}), fluid_topics } };
}
