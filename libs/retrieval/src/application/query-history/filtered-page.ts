import { Condition, encodePageKey, getPath, ReadDoc, ReadStore } from '@lib/platform';

/**
 * A page of a sorted collection holding only the documents `keep` accepts (those on corpora the caller may
 * read), reading on through the store's pages until the page is full; the page key is the store's own
 * (sort value and id of the last item), so paging stays stable while rows are added.
 */
export async function filteredPage<T extends ReadDoc>(
  reads: ReadStore,
  collection: string,
  query: { readonly where?: readonly Condition[]; readonly sort: { readonly field: string; readonly direction: 'asc' | 'desc' }; readonly limit: number; readonly pageKey?: string },
  keep: (doc: T) => boolean,
): Promise<{ items: T[]; pageKey?: string }> {
  const items: T[] = [];
  let pageKey = query.pageKey;
  for (;;) {
    const page = await reads.find<T>(collection, { where: query.where, sort: query.sort, limit: Math.max(query.limit, 100), pageKey });
    for (const doc of page.items) {
      if (!keep(doc)) continue;
      items.push(doc);
      if (items.length === query.limit) return { items, pageKey: encodePageKey(getPath(doc, query.sort.field), doc.id) };
    }
    if (!page.nextPageKey) return { items };
    pageKey = page.nextPageKey;
  }
}
