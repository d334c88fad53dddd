import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { encodePageKey, READ_STORE, ReadStore } from '@lib/platform';
import { CORPORA, CorpusRow, corpusView } from '../read-models';

export class ListCorpora {
  constructor(
    readonly limit: number,
    readonly pageKey?: string,
    /** A regular expression over name and description, as in the reference API. */
    readonly filter?: RegExp,
  ) {}
}

export interface CorporaPage {
  corpora: Record<string, unknown>[];
  metadata: { page_key?: string };
}

@QueryHandler(ListCorpora)
export class ListCorporaHandler implements IQueryHandler<ListCorpora, CorporaPage> {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  /** Pages by key; with a filter, reads on until a page's worth of matches (or the end) is found. */
  async execute(q: ListCorpora): Promise<CorporaPage> {
    const matches: CorpusRow[] = [];
    let pageKey = q.pageKey;
    let exhausted = false;
    while (matches.length <= q.limit && !exhausted) {
      const page = await this.reads.find<CorpusRow>(CORPORA, { limit: q.filter ? 100 : q.limit + 1, pageKey });
      for (const row of page.items) {
        if (!q.filter || q.filter.test(row.name) || q.filter.test(row.description)) matches.push(row);
        if (matches.length > q.limit) break;
      }
      pageKey = page.nextPageKey;
      exhausted = !pageKey;
    }
    const items = matches.slice(0, q.limit);
    const more = matches.length > q.limit;
    return { corpora: items.map(corpusView), metadata: more ? { page_key: encodePageKey(items[items.length - 1].id, items[items.length - 1].id) } : {} };
  }
}
