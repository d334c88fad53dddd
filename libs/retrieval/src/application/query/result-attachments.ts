import type { ReadStore } from '@lib/platform';
import { documentReadId, DOCUMENTS, DocumentRow, imageView } from '@lib/corpora/read-models';
import type { SearchResult } from './search-result';

/** A result's table as the reference's `Table` (with its data), and its image as `ImageMetadata` (no bytes). */
export interface ResultAttachments {
  table?: NonNullable<DocumentRow['tables']>[number];
  image?: Record<string, unknown>;
}

/**
 * The table or image a result's part was cut from, looked up in its document row (read once per document on the
 * page): the search index keeps part text and metadata, not which attachment a part summarises. The query API
 * shows them on results; the dated search tool turns them into session artifacts.
 */
export async function resultAttachments<R extends Pick<SearchResult, 'corpus_key' | 'document_id' | 'seq'>>(
  reads: ReadStore,
  page: readonly R[],
  lookUp: (r: R) => boolean = () => true,
): Promise<(R & ResultAttachments)[]> {
  const rows = new Map<string, Promise<DocumentRow | undefined>>();
  return Promise.all(
    page.map(async (r) => {
      if (!lookUp(r)) return r;
      const id = documentReadId(r.corpus_key, r.document_id);
      if (!rows.has(id)) rows.set(id, reads.get<DocumentRow>(DOCUMENTS, id));
      const row = await rows.get(id)!;
      const part = row?.parts[r.seq];
      if (!row || !part || (!part.tableId && !part.imageId)) return r;
      const table = part.tableId ? row.tables?.find((t) => t.id === part.tableId) : undefined;
      if (table) return { ...r, table: { id: table.id, ...(table.title ? { title: table.title } : {}), ...(table.description ? { description: table.description } : {}), data: table.data } };
      const image = part.imageId ? row.images?.find((i) => i.id === part.imageId) : undefined;
      return image ? { ...r, image: imageView(image) } : r;
    }),
  );
}
