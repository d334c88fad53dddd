import type { SourceFetchJob } from '../source-job';
import { Logger } from '@nestjs/common';
import { AwsClient } from 'aws4fetch';
import { readUpTo } from '@lib/platform';
import type { FetchedRecord, PageVersion } from '../../../domain/pipeline-run';
import type { S3SourceSettings } from '../../../domain/pipeline-s3-source';
import { ExtractFile, fileText, readableName } from '../file-text';
import { getWithRetry } from './retry-get';
import { fullMatch } from '../full-match';
import { ListPage, readListPage, readS3Error, S3Object } from './s3-xml';

/** What a run gives the S3 source (docs/pipelines.md, The S3 source): `secrets` holds `access_key_id` and `secret_access_key`. */
export type S3FetchJob = Pick<SourceFetchJob<S3SourceSettings>, 'source' | 'fetch' | 'secrets' | 'only' | 'known' | 'versions' | 'extract' | 'signal' | 'onRecord'>;

/** Objects above this are skipped (read from the listing's Size, so they are never downloaded). */
export const S3_MAX_OBJECT_BYTES = 25 * 1024 * 1024;
const MAX_LIST_BYTES = 16 * 1024 * 1024;
const log = new Logger('pipelines');

/** Where the bucket's objects are: path-style under `endpoint_url`, else Amazon S3's virtual-hosted URL (path-style when the name has dots, which TLS wildcards do not cover). */
export function bucketUrl(s: S3SourceSettings): string {
  if (s.endpoint_url) return `${s.endpoint_url}/${s.bucket}`;
  return s.bucket.includes('.') ? `https://s3.${s.region}.amazonaws.com/${s.bucket}` : `https://${s.bucket}.s3.${s.region}.amazonaws.com`;
}

/** The key as a URL path (RFC 3986 encoded, `/` kept); null for keys a URL cannot carry (`.`/`..` segments are folded by every URL parser). */
function keyPath(key: string): string | null {
  const parts = key.split('/');
  if (parts.some((p) => p === '.' || p === '..')) return null;
  return parts.map((p) => encodeURIComponent(p).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)).join('/');
}

/**
 * Reads a bucket through the S3 API (ListObjectsV2 paged by continuation token, GetObject), every request signed
 * with SigV4 by aws4fetch and sent through the guarded outbound fetch. Incremental: an object whose ETag is the
 * one last synced is not downloaded. A file the parser cannot read is skipped (logged with its key), not a record.
 */
export async function fetchS3Source(job: S3FetchJob): Promise<{ fetched: number; seen: Record<string, PageVersion>; complete: boolean }> {
  const { source, signal } = job;
  const aws = new AwsClient({ accessKeyId: job.secrets.access_key_id ?? '', secretAccessKey: job.secrets.secret_access_key ?? '', service: 's3', region: source.region, retries: 0 });
  const base = bucketUrl(source);
  const where = `s3://${source.bucket}`;
  const get = async (url: string, what: string, limit: number): Promise<{ status: number; body: Buffer }> => {
    const res = await getWithRetry(async () => {
      const signed = await aws.sign(url, { method: 'GET' });
      // fetch reports "fetch failed"; the cause says why (the outbound policy's refusal, a refused connection).
      return job.fetch(signed.url, { headers: Object.fromEntries(signed.headers), signal, redirect: 'error' }).catch((e: Error) => {
        throw signal.aborted ? e : new Error(`GET ${what} failed: ${(e.cause as Error | undefined)?.message ?? e.message}`);
      });
    }, signal);
    const { bytes, truncated } = await readUpTo(res, limit);
    if (truncated) throw new Error(`GET ${what} answered more than ${limit} bytes`);
    const detail = res.ok ? null : readS3Error(bytes.toString('utf8'));
    if (!res.ok && res.status !== 404) throw new Error(`GET ${what} answered ${res.status}${detail ? ` ${detail}` : ''}`);
    return { status: res.status, body: bytes };
  };

  let fetched = 0;
  const failures: string[] = [];
  const take = async (o: S3Object): Promise<void> => {
    if (job.known.has(o.key)) return;
    const path = keyPath(o.key);
    if (!path) return log.warn(`s3 ${where}: skipped "${o.key}": a key with "." or ".." segments cannot be addressed by URL`);
    if (o.size > S3_MAX_OBJECT_BYTES) return log.warn(`s3 ${where}: skipped "${o.key}": ${o.size} bytes is above ${S3_MAX_OBJECT_BYTES}`);
    if (!readableName(o.key)) return log.warn(`s3 ${where}: skipped "${o.key}": not a file type the parser reads`);
    let got: { status: number; body: Buffer };
    try {
      got = await get(`${base}/${path}`, `${where}/${o.key}`, S3_MAX_OBJECT_BYTES);
    } catch (e) {
      if (signal.aborted) throw e;
      return void failures.push((e as Error).message);
    }
    if (got.status === 404) return; // Deleted since the listing.
    const read = await fileText(job.extract, got.body, o.key);
    if ('skipped' in read) return log.warn(`s3 ${where}: skipped "${o.key}": ${read.skipped}`);
    fetched++;
    const meta = { bucket: source.bucket, key: o.key, etag: o.etag, size: o.size || got.body.length, last_modified: o.lastModified || null };
    await job.onRecord({ recordId: o.key, title: read.title ?? o.key.slice(o.key.lastIndexOf('/') + 1), text: read.text, metadata: { s3: meta, ...(Object.keys(read.metadata).length ? { file: read.metadata } : {}) } });
  };
  const fail = (): never => {
    throw new Error(`${failures.length} object(s) could not be read: ${failures.slice(0, 5).join('; ')}`);
  };

  if (job.only) {
    for (const key of job.only) if (!signal.aborted) await take({ key, etag: '', size: 0, lastModified: '' });
    if (failures.length) fail();
    return { fetched, seen: {}, complete: false };
  }
  const seen: Record<string, PageVersion> = {};
  for (const prefix of source.prefixes.length ? source.prefixes : ['']) {
    for (let token: string | null | undefined = undefined; token !== null && !signal.aborted; ) {
      const q = new URLSearchParams({ 'list-type': '2', 'encoding-type': 'url', 'max-keys': '1000', ...(prefix ? { prefix } : {}), ...(token ? { 'continuation-token': token } : {}) });
      const { status, body } = await get(`${base}/?${q}`, `${where} (ListObjectsV2, prefix "${prefix}")`, MAX_LIST_BYTES);
      if (status === 404) throw new Error(`${where}: ${readS3Error(body.toString('utf8')) ?? 'the bucket does not exist'}`);
      let page: ListPage;
      try {
        page = readListPage(body.toString('utf8'));
      } catch (e) {
        throw new Error(`${where}: ListObjectsV2 ${(e as Error).message}`);
      }
      for (const o of page.objects) {
        // Overlapping prefixes list a key twice; folder placeholders (`docs/`) are not files.
        if (signal.aborted || o.key in seen || o.key.endsWith('/')) continue;
        if ((source.pos_regex.length && !fullMatch(source.pos_regex, o.key)) || fullMatch(source.neg_regex, o.key)) continue;
        seen[o.key] = { etag: o.etag, ...(o.lastModified ? { lastModified: o.lastModified } : {}) };
        if (job.versions?.[o.key]?.etag === o.etag && o.etag) continue;
        await take(o);
      }
      token = page.nextToken;
    }
  }
  // Records delivered so far are processed; the run reports the objects that failed and writes no sync state.
  if (failures.length) fail();
  return { fetched, seen, complete: !signal.aborted };
}
