import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { findMatching, READ_STORE, ReadStore, type TextPattern } from '@lib/platform';
import { CORPORA, CorpusRow, corpusView } from '../../read-models';

export class ListCorpora {
  constructor(
    readonly limit: number,
    readonly pageKey?: string,
    /** A regular expression over name and description, as in the reference API. */
    readonly filter?: TextPattern,
    /** The corpus keys the caller may see; undefined when it may see every corpus. */
    readonly only?: readonly string[],
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
    const only = q.only ? new Set(q.only) : undefined;
    const keep = (row: CorpusRow) => (!only || only.has(row.key)) && (!q.filter || q.filter.test(row.name) || q.filter.test(row.description));
    const page = await findMatching<CorpusRow>(this.reads, CORPORA, { limit: q.limit, pageKey: q.pageKey }, keep);
    return { corpora: page.items.map(corpusView), metadata: page.nextPageKey ? { page_key: page.nextPageKey } : {} };
  }
}
