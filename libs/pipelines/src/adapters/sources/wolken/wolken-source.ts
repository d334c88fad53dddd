import type { SourceFetchJob } from '../source-job';
import type { FetchedRecord, PageVersion } from '../../../domain/pipeline-run';
import type { WolkenKbSourceSettings, WolkenLifecycle } from '../../../domain/pipeline-wolken-source';
import { readHtml } from '../web/web-source';
import { WolkenApi } from './wolken-http';

/** What a run gives the Wolken source (the registry's job, named here so this file does not import the registry). */
export type WolkenFetchJob = Pick<SourceFetchJob<WolkenKbSourceSettings>, 'source' | 'fetch' | 'secrets' | 'only' | 'known' | 'versions' | 'signal' | 'onRecord'>;

type Json = Record<string, unknown>;
/** The article body's parts, in reading order, with their headings (the fields of `articleOtherInfo`). */
const SECTIONS: readonly [field: string, title: string][] = [['introduction', 'Introduction'], ['cause', 'Cause'], ['environment', 'Environment'], ['resolution', 'Resolution'], ['additionalInfo', 'Additional Info']];
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v : typeof v === 'number' ? String(v) : null);

/** An article's reported lifecycle state as the spec names it; null when it reports none (then it is always ingested). */
export function lifecycleOf(article: Json): WolkenLifecycle | null {
  const name = str(article.statusName ?? article.articleStatus ?? article.status)?.trim().toLowerCase();
  if (!name) return null;
  if (name.startsWith('publish')) return 'published';
  if (name.startsWith('retire')) return 'retired';
  if (name.startsWith('draft')) return 'draft';
  if (name.startsWith('delete')) return 'delete';
  return null;
}

/** The article's text: each non-empty section of `articleOtherInfo` under its heading; else its description and summary. */
export function articleText(detail: Json): string {
  const other = (detail.articleOtherInfo ?? {}) as Json;
  const html = (v: unknown) => (str(v) ? readHtml(String(v), 'https://article.invalid/').text : '');
  const parts = SECTIONS.map(([field, title]) => [title, html(other[field])] as const).filter(([, t]) => t);
  const chosen = parts.length ? parts : ([['Description', html(detail.description)], ['Summary', html(detail.summary)]] as const).filter(([, t]) => t);
  return chosen.map(([title, t]) => `${title}\n${t}`).join('\n\n');
}

/**
 * Reads a Wolken ServiceDesk knowledge base (docs/pipelines.md, The Wolken knowledge-base source): an access
 * token from the refresh token, the categories, each category's articles page by page (with the reference's
 * status, validation-status and level filters), then the detail of each new or changed article. The spec's
 * lifecycle filter keeps articles whose reported state is chosen, and any article that reports none.
 * Incremental: an article whose `updatedTime` is the one last synced is not read again.
 */
export async function fetchWolkenSource(job: WolkenFetchJob): Promise<{ fetched: number; seen: Record<string, PageVersion>; complete: boolean }> {
  const { source, signal } = job;
  const api = new WolkenApi(source, job.secrets, job.fetch, signal);
  const filters = new URLSearchParams();
  if (source.status_id !== undefined) filters.set('statusId', String(source.status_id));
  if (source.validation_status_id !== undefined) filters.set('validationStatusId', String(source.validation_status_id));
  if (source.level_id !== undefined) filters.set('levelId', String(source.level_id));
  const wanted = new Set(source.lifecycle_statuses);
  const only = job.only ? new Set(job.only) : null;
  const seen: Record<string, PageVersion> = {};
  let fetched = 0;
  for await (const category of api.pages('/api/kb/categories')) {
    if (category.catId === undefined || category.catId === null) continue;
    for await (const article of api.pages(`/api/kb/articles/${encodeURIComponent(String(category.catId))}`, filters)) {
      if (signal.aborted) break;
      const id = str(article.articleNumber) ?? str(article.articleId);
      if (!id || id in seen || (only && !only.has(id))) continue; // An article filed under two categories is one record.
      const state = lifecycleOf(article);
      if (wanted.size && state && !wanted.has(state)) continue;
      const version = str(article.updatedTime) ?? '';
      seen[id] = { lastModified: version };
      if (version && job.versions?.[id]?.lastModified === version) continue;
      if (job.known.has(id)) continue;
      const detail = await api.article(String(article.articleId ?? id));
      if (!detail) continue; // Gone between the listing and the read.
      fetched++;
      await job.onRecord(toRecord(source, category, article, detail, id, state));
    }
  }
  return { fetched, seen: only ? {} : seen, complete: !only && !signal.aborted };
}

function toRecord(source: WolkenKbSourceSettings, category: Json, article: Json, detail: Json, id: string, state: WolkenLifecycle | null): FetchedRecord {
  const other = (detail.articleOtherInfo ?? {}) as Json;
  const url = source.article_url_template ? source.article_url_template.replaceAll('{article_number}', encodeURIComponent(id)) : str(article.articleUrl ?? detail.extArticleUrl ?? detail.articleUrlName);
  const wolken = {
    article_id: str(article.articleId ?? detail.articleId),
    article_number: id,
    category: str(category.catName),
    status_id: article.statusId ?? detail.statusId ?? null,
    status: state,
    validation_status_id: other.validationStatusId ?? article.validationStatusId ?? null,
    level_id: article.levelId ?? other.levelId ?? null,
    created_time: str(detail.createdTime ?? article.createdTime),
    updated_time: str(detail.updatedTime ?? article.updatedTime),
    published_date: str(other.publishedDate),
  };
  return { recordId: id, title: str(detail.articleTitle ?? article.articleTitle), text: articleText(detail), metadata: { ...(url ? { url } : {}), wolken } };
}
