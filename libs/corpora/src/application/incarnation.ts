import { conflict, StreamWriter } from '@lib/platform';
import { corpusFold, corpusIncarnation } from '../domain/corpus';
import { corpusStream } from './streams';

/**
 * After a document write: throws when the corpus is no longer the incarnation the write was decided against. A reset
 * or delete that came in between always wins (the projections apply no document event of another incarnation,
 * docs/corpora.md), so the caller is told the document is not in the corpus rather than given a success.
 */
export async function requireUnchangedCorpus(writer: StreamWriter, corpusKey: string, decided: { corpusId: string; epoch: number }): Promise<void> {
  const now = await writer.state(corpusStream(corpusKey), corpusFold);
  const same = now.status === 'active' && corpusIncarnation(now.corpusId, now.epoch) === corpusIncarnation(decided.corpusId, decided.epoch);
  if (!same) throw conflict('corpus.changed_during_write', `Corpus "${corpusKey}" was reset or deleted while the document was being written: the document is not in it`);
}
