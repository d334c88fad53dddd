import type { SourceFetchJob } from '../source-job';
import { createHash } from 'node:crypto';
import { SUPPORTED_EXTENSIONS } from '@lib/extraction';
import { documentText } from '../extract-text';
import type { ExtractFile } from '../file-text';
import type { FetchedRecord, PageVersion } from '../../../domain/pipeline-run';
import { CONFLUENCE_LIMITS, ConfluenceSourceSettings } from '../../../domain/pipeline-confluence-source';
import { Attachment, cloudDialect, dataCenterDialect } from './confluence-dialects';
import { ConfluenceApi, Json } from './confluence-http';
import { fullMatch } from '../full-match';
import { storageToText, StorageImage } from './confluence-storage';

/** What a run gives the Confluence source (the registry's job, named here so this file does not import the registry). */
export type ConfluenceFetchJob = Pick<SourceFetchJob<ConfluenceSourceSettings>, 'source' | 'fetch' | 'headers' | 'only' | 'known' | 'versions' | 'signal' | 'onRecord' | 'extract'>;

const extensionOf = (name: string) => (name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '');

/**
 * Reads a Confluence site's pages (docs/pipelines.md, The Confluence source) through the REST API v2 (Cloud)
 * or v1 (Data Center): the spaces (`space_keys`, else every global space), each space's current pages, the
 * storage-format body as text, embedded images inlined as references or omitted, attachments' text added to
 * their page's record.
 * Incremental: a page whose `version.number` is the one last synced is not read again.
 */
export async function fetchConfluenceSource(job: ConfluenceFetchJob): Promise<{ fetched: number; seen: Record<string, PageVersion>; complete: boolean }> {
  const { source, signal } = job;
  const dialect = source.deployment === 'data_center' ? dataCenterDialect(source.base_url) : cloudDialect(source.base_url);
  const api = new ConfluenceApi(dialect, source.base_url, job.fetch, job.headers, signal);
  let fetched = 0;
  const take = async (listed: Json, spaceKey: string | null, files?: Attachment[]): Promise<void> => {
    const id = String(listed.id);
    if (job.known.has(id) || signal.aborted) return;
    const read = (listed.body as { storage?: unknown } | undefined)?.storage ? { page: listed, spaceKey } : await api.get(dialect.page(id), true).then((p) => (p ? dialect.normPage(p) : null));
    if (!read) return; // Deleted between the listing and the read.
    fetched++;
    await job.onRecord(await toRecord(api, job, read.page, spaceKey ?? read.spaceKey, files));
  };

  if (job.only) {
    for (const id of job.only) if (!signal.aborted) await take({ id }, null);
    return { fetched, seen: {}, complete: false };
  }
  const spaces: { id: string; key: string }[] = [];
  const keys = source.space_keys;
  for (const url of dialect.spaces(keys)) for await (const s of api.list(url)) spaces.push({ id: String(s.id), key: String(s.key) });
  const missing = keys.filter((k) => !spaces.some((s) => s.key === k));
  if (missing.length) throw new Error(`space ${missing.join(', ')} was not found or the account cannot read it`);

  // A first or full read takes the bodies with the listing; an incremental one lists versions and reads only changed pages.
  const withBody = !job.versions || Object.keys(job.versions).length === 0;
  const seen: Record<string, PageVersion> = {};
  for (const space of spaces) {
    for await (const item of api.list(dialect.pages(space, withBody))) {
      if (signal.aborted) break;
      const { page } = dialect.normPage(item);
      const id = String(page.id);
      // With attachments read, a new upload (which leaves the page's version as it was) must count as a change too.
      const files = source.attachments.enabled ? await listAttachments(api, id) : undefined;
      const number = String((page.version as { number?: unknown } | undefined)?.number ?? '');
      const version = files ? `${number}+${fingerprint(files)}` : number;
      seen[id] = { etag: version };
      if (job.versions?.[id]?.etag === version && number !== '') continue;
      await take(page, space.key, files);
    }
  }
  return { fetched, seen, complete: !signal.aborted };
}

async function listAttachments(api: ConfluenceApi, pageId: string): Promise<Attachment[]> {
  const files: Attachment[] = [];
  for await (const a of api.list(api.dialect.attachments(pageId))) files.push(api.dialect.normAttachment(a));
  return files;
}

/** The page's attachments as one short value: each one's id and version (else size), sorted. */
const fingerprint = (files: readonly Attachment[]): string =>
  createHash('sha256')
    .update(files.map((f) => `${f.id ?? f.title}@${f.version ?? f.fileSize ?? ''}`).sort().join('\n'))
    .digest('hex')
    .slice(0, 16);

/** A page as a record: its text, its images per `embedded_images`, the text of its chosen attachments. */
async function toRecord(api: ConfluenceApi, job: ConfluenceFetchJob, page: Json, spaceKey: string | null, listed?: Attachment[]): Promise<FetchedRecord> {
  const { attachments: rule, embedded_images: images } = job.source;
  const id = String(page.id);
  // The page's attachments are listed when their text is wanted, or to know the size of the images it embeds.
  const files: Attachment[] = listed ?? (rule.enabled || images.mode === 'inline' ? await listAttachments(api, id) : []);
  const byName = new Map(files.map((f) => [f.title, f]));
  const inlined: Record<string, unknown>[] = [];
  let budget: number = CONFLUENCE_LIMITS.pageInlineBytes;
  const image = (img: StorageImage): string => {
    if (images.mode === 'omit') return '';
    const label = img.alt ? `: ${img.alt}` : '';
    if (img.url) return inlined.push({ url: img.url, ...(img.alt ? { alt: img.alt } : {}) }), `[image${label}] (${img.url})`;
    const file = img.filename ? byName.get(img.filename) : undefined;
    const size = file?.fileSize ?? 0;
    if (size > images.max_bytes || size > budget) return `[image ${img.filename} not inlined: ${size > images.max_bytes ? 'larger than embedded_images.max_bytes' : 'past the 20 MiB per-page inlining limit'}]`;
    budget -= size;
    inlined.push({ filename: img.filename, ...(img.alt ? { alt: img.alt } : {}), ...(file ? { media_type: file.mediaType, size, download_url: file.downloadLink ? `${api.dialect.web}${file.downloadLink}` : undefined } : {}) });
    return `[image: ${img.filename}${label}]`;
  };
  const storage = String((page.body as { storage?: { value?: unknown } } | undefined)?.storage?.value ?? '');
  const parts = [storageToText(storage, image)];
  const read: Record<string, unknown>[] = [];
  const skipped: { filename: string; reason: string }[] = [];
  if (rule.enabled) {
    for (const file of files) {
      const name = file.title;
      if ((rule.pos_regex.length && !fullMatch(rule.pos_regex, name)) || fullMatch(rule.neg_regex, name)) continue;
      const reason = await readAttachment(api, job, file, (text) => parts.push(`Attachment: ${name}\n${text}`));
      if (reason) skipped.push({ filename: name, reason });
      else read.push({ filename: name, media_type: file.mediaType, size: file.fileSize });
    }
  }
  const links = page._links as { webui?: unknown } | undefined;
  const version = page.version as { number?: unknown; createdAt?: unknown } | undefined;
  const metadata = {
    ...(typeof links?.webui === 'string' ? { url: `${api.dialect.web}${links.webui}` } : {}),
    confluence: { page_id: id, space_id: page.spaceId ?? null, space_key: spaceKey, version: version?.number ?? null, updated_at: version?.createdAt ?? null, parent_id: page.parentId ?? null },
    ...(inlined.length ? { images: inlined } : {}),
    ...(read.length ? { attachments: read } : {}),
    ...(skipped.length ? { attachments_skipped: skipped } : {}),
  };
  return { recordId: id, title: typeof page.title === 'string' ? page.title : null, text: parts.filter((p) => p.trim()).join('\n\n'), metadata };
}

/** An attachment's text added through `add`; else why it was skipped (too large, a type the parsers cannot read, unreadable). */
async function readAttachment(api: ConfluenceApi, job: ConfluenceFetchJob, file: Attachment, add: (text: string) => void): Promise<string | null> {
  const max = job.source.attachments.max_bytes;
  const ext = extensionOf(file.title);
  if (ext && !SUPPORTED_EXTENSIONS.includes(ext)) return `files of type .${ext} cannot be read as text`;
  if ((file.fileSize ?? 0) > max) return `larger than attachments.max_bytes (${max})`;
  if (!file.downloadLink) return 'the API gave no download link';
  try {
    const { bytes, truncated } = await api.download(file.downloadLink, max);
    if (truncated) return `larger than attachments.max_bytes (${max})`;
    add(documentText(await job.extract(bytes, file.title)));
    return null;
  } catch (e) {
    return (e as Error).message.slice(0, 300);
  }
}
