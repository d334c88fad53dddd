import { CORPORA, CorpusEvent, corpusFold, corpusStream, DeleteCorpus, DeleteCorpusHandler, DOCUMENTS, IndexDocument, IndexDocumentHandler, ResetCorpus, ResetCorpusHandler } from '@lib/corpora';
import type { EncoderRegistry } from '@lib/encoders';
import { CommandContext, Projection, StreamWriter } from '@lib/platform';
import { SqliteDatabase, SqliteEventStore } from '@lib/platform/sqlite';
import { ProjectionHarness } from '@lib/testing';
import { corporaProjection, documentsProjection, searchProjection } from '@projections';

/**
 * Issue 20: a document write and a corpus reset or delete racing on one corpus. The write reads the corpus, embeds
 * (here: the reset or delete happens during the embedding), then appends to the document stream of the incarnation
 * it read, after the reset. The reset or delete always wins: the write is answered 409 and no read model or search
 * index shows the document, as the log says.
 */
describe('document write racing a corpus reset or delete', () => {
  let sqlite: SqliteDatabase;
  let writer: StreamWriter;
  let n = 0;
  const ctx = (): CommandContext => ({ actor: { type: 'api_key', id: 'k' } as CommandContext['actor'], requestId: `r${++n}`, commandId: `c${n}`, now: new Date('2026-01-01T00:00:00Z') });
  let duringEmbedding: () => Promise<unknown> = async () => undefined;
  const encoder = {
    name: 'fake',
    dimensions: 2,
    lexicalUnit: 1,
    encode: async (texts: readonly string[]) => {
      await duringEmbedding();
      return texts.map(() => Float32Array.from([1, 0]));
    },
  };
  const registry = { find: () => encoder, lookup: async () => encoder } as unknown as EncoderRegistry;

  beforeEach(async () => {
    sqlite = new SqliteDatabase({ path: ':memory:' });
    writer = new StreamWriter({ store: new SqliteEventStore(sqlite), progress: { waitFor: async () => true }, timeoutMs: 0 });
    const settings = { name: 'A', description: '', enabled: true, saveHistory: false, queriesAreAnswers: false, documentsAreQuestions: false, filterAttributes: [], encoderName: 'fake', encoderDimensions: 2 };
    await writer.write(corpusStream('a'), corpusFold, (): CorpusEvent[] => [{ type: 'CorpusCreated', data: { corpusKey: 'a', corpusId: 'crp_1', settings, createdAt: '2026-01-01T00:00:00Z' } }], ctx(), []);
  });
  afterEach(() => sqlite.close());

  const index = (id: string) => new IndexDocumentHandler(writer, registry).execute(new IndexDocument('a', { type: 'core', id, metadata: {}, parts: [{ text: `whales ${id}` }] }, 'indexed', ctx()));
  const project = async <T>(projection: Projection, read: (h: ProjectionHarness) => Promise<T>): Promise<T> => {
    const h = await new ProjectionHarness(projection).project(await new SqliteEventStore(sqlite).readAll());
    try {
      return await read(h);
    } finally {
      h.close();
    }
  };
  const visible = async () => ({
    documents: await project(documentsProjection, async (h) => (await h.reads.find(DOCUMENTS, { where: [{ field: 'corpus_key', op: 'eq', value: 'a' }], limit: 10 })).items.map((d) => d.id)),
    usedDocs: await project(corporaProjection, async (h) => (await h.reads.get<{ id: string; used_docs: number }>(CORPORA, 'a'))?.used_docs),
    searched: await project(searchProjection, async (h) => (await h.search.search('a', { mode: 'lexical', text: 'whales', limit: 10 })).map((x) => x.documentId)),
  });

  it('a reset during the write wins: 409, and the document is nowhere, though its event follows the reset in the log', async () => {
    await index('before');
    duringEmbedding = () => new ResetCorpusHandler(writer).execute(new ResetCorpus('a', ctx()));
    await expect(index('raced')).rejects.toMatchObject({ kind: 'conflict', code: 'corpus.changed_during_write' });
    const log = (await new SqliteEventStore(sqlite).readAll()).map((e) => e.type);
    expect(log.slice(-2)).toEqual(['CorpusReset', 'DocumentIndexed']);
    expect(await visible()).toEqual({ documents: [], usedDocs: 0, searched: [] });
    duringEmbedding = async () => undefined;
    await index('after');
    expect(await visible()).toEqual({ documents: ['a/after'], usedDocs: 1, searched: ['after'] });
  });

  it('a delete during the write wins: 409, and the document is nowhere', async () => {
    duringEmbedding = () => new DeleteCorpusHandler(writer).execute(new DeleteCorpus('a', ctx()));
    await expect(index('raced')).rejects.toMatchObject({ kind: 'conflict', code: 'corpus.changed_during_write' });
    expect(await visible()).toEqual({ documents: [], usedDocs: undefined, searched: [] });
  });
});
