/**
 * The `web` source of a pipeline, checked field by field (docs/pipelines.md). Pure: a problem is a
 * `[field, reason]` pair the edge turns into a 400 naming the field. The reference's other source types are
 * refused by name until their clients exist (not accepted and ignored).
 */
import { compileTextPattern, PatternSyntaxError } from '@lib/platform/filter';

/** A web source's credential as stored: the identifiers only; the secret is sealed beside the settings. */
export type WebAuthSettings = { readonly type: 'bearer' } | { readonly type: 'header'; readonly header: string } | { readonly type: 'oauth_client_credentials'; readonly client_id: string; readonly token_endpoint: string; readonly scopes?: readonly string[] };

export type WebPagesSource =
  | { readonly type: 'sitemap'; readonly sitemap_urls: readonly string[] }
  | ({ readonly type: 'crawl'; readonly urls: readonly string[] } & CrawlKnobs)
  | ({ readonly type: 'sitemap_crawl'; readonly urls: readonly string[]; readonly sitemap_urls: readonly string[] } & CrawlKnobs);

export interface CrawlKnobs {
  readonly max_depth: number;
  readonly same_domain_only: boolean;
  readonly pos_regex: readonly string[];
  readonly neg_regex: readonly string[];
}

export interface WebSourceSettings {
  readonly type: 'web';
  readonly pages_source: WebPagesSource;
  readonly respect_robots_txt: boolean;
  readonly requests_per_second: number;
  readonly max_concurrent_fetches: number;
  readonly max_pages: number;
  readonly user_agent: string;
  readonly max_page_bytes: number;
  readonly excluded_content_types: readonly string[];
  readonly auth?: WebAuthSettings;
}

export type Problem = readonly [field: string, reason: string];

/** Source types of the reference that have no client here yet. */
export const UNBUILT_SOURCE_TYPES: readonly string[] = [];

const WEB_FIELDS = ['type', 'pages_source', 'respect_robots_txt', 'requests_per_second', 'max_concurrent', 'max_concurrent_fetches', 'max_pages', 'js_rendering', 'user_agent', 'max_page_bytes', 'excluded_content_types', 'auth'];
const PAGE_FIELDS = { sitemap: ['type', 'sitemap_urls'], crawl: ['type', 'urls', 'max_depth', 'same_domain_only', 'pos_regex', 'neg_regex'], sitemap_crawl: ['type', 'urls', 'sitemap_urls', 'max_depth', 'same_domain_only', 'pos_regex', 'neg_regex'] } as const;
type WebDefaults = Pick<WebSourceSettings, 'respect_robots_txt' | 'requests_per_second' | 'max_concurrent_fetches' | 'max_pages' | 'user_agent' | 'max_page_bytes'>;
export const WEB_DEFAULTS: WebDefaults = { respect_robots_txt: true, requests_per_second: 2, max_concurrent_fetches: 2, max_pages: 10_000, user_agent: 'Vectara-Crawler/1.0 (+https://www.vectara.com/crawler)', max_page_bytes: 10_485_760 };

/** Shared by every source's checks. */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
export const isInt = (v: unknown, min: number, max: number): boolean => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

function urls(v: unknown, field: string, min: number, max: number): Problem | null {
  if (!Array.isArray(v) || v.length < min || v.length > max) return [field, `must be a list of ${min} to ${max} URLs`];
  for (const [i, u] of v.entries()) {
    if (typeof u !== 'string' || u.length > 2048 || !/^https?:\/\//i.test(u)) return [`${field}[${i}]`, 'must be an http(s) URL of at most 2048 characters'];
    try {
      new URL(u);
    } catch {
      return [`${field}[${i}]`, 'is not a valid URL'];
    }
  }
  return null;
}

/** A list of up to 100 regular expressions (pos_regex / neg_regex of every source that has them). */
export function regexes(v: unknown, field: string): Problem | null {
  if (v === undefined) return null;
  if (!Array.isArray(v) || v.length > 100) return [field, 'must be a list of at most 100 patterns'];
  for (const [i, p] of v.entries()) {
    if (typeof p !== 'string' || p.length > 1024) return [`${field}[${i}]`, 'must be a pattern of at most 1024 characters'];
    try {
      compileTextPattern(p, { whole: true });
    } catch (e) {
      if (!(e instanceof PatternSyntaxError)) throw e;
      return [`${field}[${i}]`, `is not a regular expression in RE2 syntax (no lookaround or backreferences): ${e.message}`];
    }
  }
  return null;
}

function unknownField(v: Record<string, unknown>, allowed: readonly string[], prefix: string): Problem | null {
  const extra = Object.keys(v).find((k) => !allowed.includes(k));
  return extra ? [`${prefix}.${extra}`, 'is not a field of this source'] : null;
}

/** The `pages_source` of a web source with the reference's defaults; `sitemap+crawl` (the spec's name) reads as `sitemap_crawl`. */
export function parsePagesSource(v: unknown, at: string): WebPagesSource | Problem {
  if (!isObject(v)) return [at, 'must be an object with a type: sitemap, crawl or sitemap_crawl'];
  const type = v.type === 'sitemap+crawl' ? 'sitemap_crawl' : v.type;
  if (type !== 'sitemap' && type !== 'crawl' && type !== 'sitemap_crawl') return [`${at}.type`, 'must be sitemap, crawl or sitemap_crawl'];
  const problem =
    unknownField(v, PAGE_FIELDS[type], at) ??
    (type !== 'crawl' ? urls(v.sitemap_urls, `${at}.sitemap_urls`, 1, 100) : null) ??
    (type === 'crawl' ? urls(v.urls, `${at}.urls`, 1, 1000) : type === 'sitemap_crawl' && v.urls !== undefined ? urls(v.urls, `${at}.urls`, 0, 1000) : null) ??
    (v.max_depth !== undefined && !isInt(v.max_depth, 0, 10) ? [`${at}.max_depth`, 'must be an integer from 0 to 10'] : null) ??
    (v.same_domain_only !== undefined && typeof v.same_domain_only !== 'boolean' ? [`${at}.same_domain_only`, 'must be a boolean'] : null) ??
    regexes(v.pos_regex, `${at}.pos_regex`) ??
    regexes(v.neg_regex, `${at}.neg_regex`);
  if (problem) return problem;
  if (type === 'sitemap') return { type, sitemap_urls: v.sitemap_urls as string[] };
  const knobs: CrawlKnobs = { max_depth: (v.max_depth as number | undefined) ?? 3, same_domain_only: (v.same_domain_only as boolean | undefined) ?? true, pos_regex: (v.pos_regex as string[] | undefined) ?? [], neg_regex: (v.neg_regex as string[] | undefined) ?? [] };
  return type === 'crawl' ? { type, urls: v.urls as string[], ...knobs } : { type, urls: (v.urls as string[] | undefined) ?? [], sitemap_urls: v.sitemap_urls as string[], ...knobs };
}

/** The politeness and limit fields (`base`: the stored source a partial update merges into). */
export function parseWebSource(v: Record<string, unknown>, base?: WebSourceSettings): Omit<WebSourceSettings, 'auth'> | Problem {
  const problem =
    unknownField(v, WEB_FIELDS, 'source') ??
    (v.respect_robots_txt !== undefined && typeof v.respect_robots_txt !== 'boolean' ? ['source.respect_robots_txt', 'must be a boolean'] : null) ??
    // The spec's bound (50, applied to each concurrent fetch) over the reference's 20.
    (v.requests_per_second !== undefined && (typeof v.requests_per_second !== 'number' || v.requests_per_second < 0.1 || v.requests_per_second > 50) ? ['source.requests_per_second', 'must be a number from 0.1 to 50'] : null) ??
    (v.max_concurrent_fetches !== undefined && !isInt(v.max_concurrent_fetches, 1, 4) ? ['source.max_concurrent_fetches', 'must be an integer from 1 to 4'] : null) ??
    (v.max_concurrent !== undefined && !isInt(v.max_concurrent, 1, 8) ? ['source.max_concurrent', 'must be an integer from 1 to 8 (deprecated and ignored: use max_concurrent_fetches)'] : null) ??
    (v.max_pages !== undefined && !isInt(v.max_pages, 1, 1_000_000) ? ['source.max_pages', 'must be an integer from 1 to 1000000'] : null) ??
    (v.js_rendering === true ? ['source.js_rendering', 'rendering pages with a headless browser is not built; leave it false'] : null) ??
    (v.js_rendering !== undefined && typeof v.js_rendering !== 'boolean' ? ['source.js_rendering', 'must be a boolean'] : null) ??
    (v.user_agent !== undefined && (typeof v.user_agent !== 'string' || v.user_agent.length > 256 || /[\r\n]/.test(v.user_agent)) ? ['source.user_agent', 'must be at most 256 characters without CR or LF'] : null) ??
    (v.max_page_bytes !== undefined && !isInt(v.max_page_bytes, 65_536, 104_857_600) ? ['source.max_page_bytes', 'must be an integer from 65536 to 104857600'] : null) ??
    (v.excluded_content_types !== undefined && (!Array.isArray(v.excluded_content_types) || v.excluded_content_types.length > 50 || v.excluded_content_types.some((t) => typeof t !== 'string' || t.length > 255)) ? ['source.excluded_content_types', 'must be a list of at most 50 MIME types'] : null);
  if (problem) return problem;
  let pages: WebPagesSource | undefined = base?.pages_source;
  if (v.pages_source !== undefined || !base) {
    const parsed = parsePagesSource(v.pages_source, 'source.pages_source');
    if (isProblem(parsed)) return parsed;
    pages = parsed;
  }
  const pick = <K extends keyof WebDefaults>(k: K): WebDefaults[K] => (v[k] as WebDefaults[K] | undefined) ?? base?.[k] ?? WEB_DEFAULTS[k];
  return {
    type: 'web',
    pages_source: pages!,
    respect_robots_txt: pick('respect_robots_txt'),
    requests_per_second: pick('requests_per_second'),
    max_concurrent_fetches: pick('max_concurrent_fetches'),
    max_pages: pick('max_pages'),
    user_agent: pick('user_agent'),
    max_page_bytes: pick('max_page_bytes'),
    excluded_content_types: (v.excluded_content_types as string[] | undefined) ?? base?.excluded_content_types ?? [],
  };
}

export const isProblem = (v: unknown): v is Problem => Array.isArray(v) && v.length === 2 && typeof v[0] === 'string';
