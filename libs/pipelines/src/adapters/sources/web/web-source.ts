import type { SourceFetchJob } from '../source-job';
import { Parser } from 'htmlparser2';
import type { FetchedRecord, PageVersion } from '../../../domain/pipeline-run';
import type { WebSourceSettings } from '../../../domain/pipeline-source';
import { readUpTo } from '@lib/platform';
import { ALLOW_ALL, parseRobots, Robots } from './robots';
import { fullMatch } from '../full-match';

/** RFC 9309 asks crawlers to parse at least 500 KiB of robots.txt; the sitemaps protocol caps a sitemap at 50 MiB. */
const ROBOTS_BYTES = 512 * 1024;
const SITEMAP_BYTES = 50 * 1024 * 1024;
const text = async (res: Response, limit: number) => (await readUpTo(res, limit)).bytes.toString('utf8');

/** What a run gives the web source: the guarded fetch, the credential's headers, what it already has. */
export type WebFetchJob = Pick<SourceFetchJob<WebSourceSettings>, 'source' | 'fetch' | 'headers' | 'only' | 'known' | 'versions' | 'signal' | 'onRecord'>;

const SKIPPED_TYPES = /^(image|video|audio)\//;
const sleep = (ms: number, signal: AbortSignal) => new Promise<void>((r) => (signal.aborted ? r() : (setTimeout(r, ms).unref(), signal.addEventListener('abort', () => r(), { once: true }))));

/** The record id of a page: its URL without the fragment (the reference's "canonicalized URL"). */
export const canonical = (url: string): string => {
  const u = new URL(url);
  u.hash = '';
  return u.href;
};

/** Text, title and links of an HTML page; script, style and template text left out. */
export function readHtml(html: string, base: string): { title: string | null; text: string; links: string[] } {
  const parts: string[] = [];
  const links: string[] = [];
  let title = '';
  let skip = 0;
  let inTitle = false;
  const parser = new Parser({
    onopentag(name, attrs) {
      if (name === 'script' || name === 'style' || name === 'template' || name === 'noscript') skip++;
      if (name === 'title') inTitle = true;
      if (name === 'a' && attrs.href) {
        try {
          links.push(canonical(new URL(attrs.href, base).href));
        } catch {
          /* not a URL: not followed */
        }
      }
    },
    ontext(text) {
      if (inTitle) title += text;
      else if (!skip) parts.push(text);
    },
    onclosetag(name) {
      if (name === 'script' || name === 'style' || name === 'template' || name === 'noscript') skip = Math.max(0, skip - 1);
      if (name === 'title') inTitle = false;
    },
  });
  parser.end(html);
  return { title: title.trim() || null, text: parts.join(' ').replace(/\s+/g, ' ').trim(), links };
}

/** `<loc>`s of a sitemap: pages of a `<urlset>`, child sitemaps of a `<sitemapindex>`. */
export function readSitemap(xml: string): { pages: string[]; sitemaps: string[] } {
  const pages: string[] = [];
  const sitemaps: string[] = [];
  let parent = '';
  let inLoc = false;
  let loc = '';
  const parser = new Parser(
    {
      onopentag(name) {
        if (name === 'url' || name === 'sitemap') parent = name;
        if (name === 'loc') (inLoc = true), (loc = '');
      },
      ontext(text) {
        if (inLoc) loc += text;
      },
      onclosetag(name) {
        if (name !== 'loc') return;
        inLoc = false;
        (parent === 'sitemap' ? sitemaps : pages).push(loc.trim());
      },
    },
    { xmlMode: true },
  );
  parser.end(xml);
  return { pages, sitemaps };
}

/**
 * Discovers and fetches a site's pages (docs/pipelines.md, web source): sitemaps, breadth-first links, or both;
 * robots.txt honoured per origin; `max_concurrent_fetches` fetchers, each holding its own `requests_per_second`
 * (or the site's longer Crawl-delay); at most `max_pages` pages; bodies cut at `max_page_bytes`.
 */
export async function fetchWebSource(job: WebFetchJob): Promise<{ fetched: number; seen: Record<string, PageVersion>; complete: boolean }> {
  const { source, signal } = job;
  const robots = new Map<string, Promise<Robots>>();
  const robotsFor = (url: string): Promise<Robots> => {
    if (!source.respect_robots_txt) return Promise.resolve(ALLOW_ALL);
    const origin = new URL(url).origin;
    if (!robots.has(origin)) robots.set(origin, get(`${origin}/robots.txt`).then(async ({ res }) => (res.ok ? parseRobots(`${origin}/robots.txt`, await text(res, ROBOTS_BYTES), source.user_agent) : ALLOW_ALL)).catch(() => ALLOW_ALL));
    return robots.get(origin)!;
  };
  // The credential goes only to the hosts the pipeline names (its sitemaps and seeds), never to a linked site.
  const pages0 = source.pages_source;
  const credentialHosts = new Set([...(pages0.type === 'crawl' ? [] : pages0.sitemap_urls), ...(pages0.type === 'sitemap' ? [] : pages0.urls), ...(job.only ?? [])].map((u) => new URL(u).host));
  // Redirects are followed here (up to 5), so each hop gets the credential only if its host is one of those.
  const get = async (url: string, extra: Record<string, string> = {}): Promise<{ res: Response; url: string }> => {
    for (let hop = 0; ; hop++) {
      const res = await job.fetch(url, { headers: { 'user-agent': source.user_agent, ...(credentialHosts.has(new URL(url).host) ? job.headers : {}), ...extra }, signal, redirect: 'manual' });
      const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null;
      if (!location || hop >= 5) return { res, url };
      await res.body?.cancel();
      url = new URL(location, url).href;
    }
  };
  const seen: Record<string, PageVersion> = {};

  const pages = source.pages_source;
  const crawl = pages.type === 'crawl' || pages.type === 'sitemap_crawl' ? pages : null;
  const queued = new Set<string>();
  const queue: { url: string; depth: number }[] = [];
  const enqueue = (url: string, depth: number) => {
    const id = canonical(url);
    if (queued.has(id)) return;
    queued.add(id);
    queue.push({ url: id, depth });
  };
  if (job.only) for (const u of job.only) enqueue(u, Number.POSITIVE_INFINITY);
  else {
    const sitemaps = pages.type === 'crawl' ? [] : [...pages.sitemap_urls];
    for (let i = 0; i < sitemaps.length && i < 1000 && !signal.aborted; i++) {
      const got = await get(sitemaps[i]).catch(() => null);
      if (!got?.res.ok) continue;
      const found = readSitemap(await text(got.res, SITEMAP_BYTES));
      sitemaps.push(...found.sitemaps);
      for (const p of found.pages) enqueue(p, 0);
    }
    if (crawl) for (const u of crawl.urls) enqueue(u, 0);
  }
  const seeds = new Set(queue.map((q) => new URL(q.url).hostname));
  const follow = (url: string) => {
    if (!crawl) return false;
    if (!/^https?:/i.test(url)) return false;
    if (crawl.same_domain_only && !seeds.has(new URL(url).hostname)) return false;
    if (crawl.pos_regex.length && !fullMatch(crawl.pos_regex, url)) return false;
    return !fullMatch(crawl.neg_regex, url);
  };

  let fetched = job.known.size;
  const fetcher = async () => {
    for (;;) {
      if (signal.aborted || fetched >= source.max_pages) return;
      const next = queue.shift();
      if (!next) return;
      const rules = await robotsFor(next.url);
      if (!rules.allowed(next.url)) continue;
      const started = Date.now();
      const previous = job.versions?.[next.url];
      const page = await fetchPage(next.url, (u) => get(u, conditional(previous)), source).catch(() => null);
      if (page === 'unchanged') seen[next.url] = previous!;
      else if (page) {
        seen[page.record.recordId] = { ...validators(page.record), ...(crawl ? { links: page.links } : {}) };
        if (!job.known.has(page.record.recordId) && fetched < source.max_pages) {
          fetched++;
          await job.onRecord(page.record);
        }
      }
      const links = page === 'unchanged' ? (previous?.links ?? []) : (page?.links ?? []);
      if (page && next.depth < (crawl?.max_depth ?? 0)) for (const link of links) if (follow(link)) enqueue(link, next.depth + 1);
      const gapMs = Math.max(1000 / source.requests_per_second, (rules.crawlDelay ?? 0) * 1000);
      await sleep(Math.max(0, gapMs - (Date.now() - started)), signal);
    }
  };
  // A fetcher that found the queue empty may quit while another is still adding links: run rounds until none adds.
  while (queue.length && !signal.aborted && fetched < source.max_pages) await Promise.all(Array.from({ length: source.max_concurrent_fetches }, fetcher));
  return { fetched, seen, complete: !job.only && !signal.aborted && queue.length === 0 && fetched < source.max_pages };
}

const conditional = (v: PageVersion | undefined): Record<string, string> => ({ ...(v?.etag ? { 'if-none-match': v.etag } : {}), ...(v?.lastModified ? { 'if-modified-since': v.lastModified } : {}) });
const validators = (r: FetchedRecord): PageVersion => ({ ...(typeof r.metadata.etag === 'string' ? { etag: r.metadata.etag } : {}), ...(typeof r.metadata.last_modified === 'string' ? { lastModified: r.metadata.last_modified } : {}) });

/** A page as a record and its links; `unchanged` on a 304 to a conditional request; null when not a page to read. */
async function fetchPage(url: string, get: (url: string) => Promise<{ res: Response; url: string }>, source: WebSourceSettings): Promise<{ record: FetchedRecord; links: string[] } | 'unchanged' | null> {
  const { res, url: finalUrl } = await get(url);
  if (res.status === 304) return 'unchanged';
  if (!res.ok) return null;
  const type = (res.headers.get('content-type') ?? 'text/html').split(';')[0].trim().toLowerCase();
  if (SKIPPED_TYPES.test(type) || source.excluded_content_types.includes(type) || !(type.startsWith('text/') || type === 'application/xhtml+xml')) return null;
  // Read no further than the page's bound: a site answering gigabytes costs max_page_bytes, not memory.
  const { bytes } = await readUpTo(res, source.max_page_bytes);
  const body = bytes.toString('utf8');
  const final = canonical(finalUrl);
  const html = type === 'text/html' || type === 'application/xhtml+xml';
  const read = html ? readHtml(body, final) : { title: null, text: body.trim(), links: [] };
  const metadata = { url: final, content_type: type, ...(res.headers.get('etag') ? { etag: res.headers.get('etag') } : {}), ...(res.headers.get('last-modified') ? { last_modified: res.headers.get('last-modified') } : {}) };
  return { record: { recordId: final, title: read.title, text: read.text, metadata }, links: read.links };
}
