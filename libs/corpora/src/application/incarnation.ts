import { conflict, StreamState, StreamWriter } from '@lib/platform';
import { CorpusState, corpusFold, corpusIncarnation } from '../domain/corpus';
import { corpusStream } from './streams';

/**
 * After a document write: throws when the corpus is no longer the incarnation the write was decided against. A reset
 * or delete that came in between always wins (the projections apply no document event of another incarnation,
 * docs/corpora.md), so the caller is told the document is not in the corpus rather than given a success. Only the
 * corpus events after the decided revision are read (usually none), not the whole stream again.
 */
export async function requireUnchangedCorpus(writer: StreamWriter, corpusKey: string, decided: StreamState<CorpusState>): Promise<void> {
  const now = await writer.stateWithRevision(corpusStream(corpusKey), corpusFold, decided);
  if (now.revision === decided.revision) return;
  const incarnation = (s: CorpusState) => (s.status === 'active' ? corpusIncarnation(s.corpusId, s.epoch) : undefined);
  const same = now.state.status === 'active' && incarnation(now.state) === incarnation(decided.state);
  if (!same) throw conflict('corpus.changed_during_write', `Corpus "${corpusKey}" was reset or deleted while the document was being written: the document is not in it`);
}
