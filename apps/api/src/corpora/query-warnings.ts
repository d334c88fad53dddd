import type { Response } from 'express';
import { splitWarnings } from '@lib/retrieval';

/** Header carrying what the reference's `warnings` enum cannot say (docs/search.md). */
export const QUERY_NOTICES_HEADER = 'x-query-notices';

/** Header values are printable ASCII on one line; notices are ours (codes, corpus keys, encoder names). */
const headerSafe = (text: string): string => text.replace(/[^\x20-\x7e]/g, '?').slice(0, 4000);

/** The body with `warnings` narrowed to the reference's values; the other notices go to a header. */
export function withReferenceWarnings<T extends { warnings?: readonly string[] }>(body: T, res: Response): Omit<T, 'warnings'> & { warnings?: string[] } {
  const { warnings: all, ...rest } = body;
  const { warnings, notices } = splitWarnings(all);
  if (notices.length && !res.headersSent) res.setHeader(QUERY_NOTICES_HEADER, headerSafe(notices.join(' | ')));
  return warnings.length ? { ...rest, warnings } : rest;
}
