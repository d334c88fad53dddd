import { corporaHistory, given, onceAndTwice, ProjectionHarness, racedHistory } from '@lib/testing';
import { searchProjection } from './search.projection';

describe('search projection', () => {
  it('indexes parts per corpus, forgets deleted documents, and a re-created corpus starts empty', async () => {
    const s = corporaHistory();
    s.created('a');
    s.indexed('a', 'd1', ['whales sing']);
    s.indexed('a', 'd2', ['sharks swim']);
    s.removed('a', 'd2', 1);
    const h = await given(s.log.events).project(searchProjection);
    const ids = async (q: string) => (await h.search.search('a', { mode: 'lexical', text: q, limit: 5 })).map((x) => x.documentId);
    expect(await ids('whales sharks')).toEqual(['d1']);
    await h.replay(s.log.events.slice(2));
    expect(await ids('whales sharks')).toEqual(['d1']);
    s.deleted('a');
    s.created('a', 'crp_a2');
    await h.project(s.log.events.slice(-2));
    expect(await ids('whales')).toEqual([]);
    h.close();
  });

  it('indexes no document write decided against a corpus that was reset or deleted before it was appended', async () => {
    const h = await given(racedHistory().log.events).project(searchProjection);
    const hits = async (index: string) => (await h.search.search(index, { mode: 'lexical', text: 'whales', limit: 10 })).map((x) => [x.documentId, x.documentMetadata]);
    expect(await hits('a')).toEqual([['fresh', { id: 'fresh' }]]);
    expect(await hits('b')).toEqual([]);
    h.close();
  });

  it('applying every event twice changes nothing', async () => {
    const s = corporaHistory();
    s.created('a');
    s.indexed('a', 'd1', ['whales sing', 'at night']);
    s.indexed('a', 'd2', ['sharks swim']);
    s.indexed('a', 'd3', ['rays glide']);
    s.metadataUpdated('a', 'd1', { lang: 'en' }, 2);
    s.removed('a', 'd2', 1);
    s.created('b');
    s.indexed('b', 'd4', ['whales again']);
    s.reset('b', 1);
    const parts = (h: ProjectionHarness) =>
      Promise.all(
        [['a', 'd1'], ['a', 'd2'], ['a', 'd3'], ['b', 'd4']].map(async ([index, id]) =>
          (await h.search.documentParts(index, id)).map(({ documentId, text, documentMetadata }) => ({ documentId, text, documentMetadata })),
        ),
      );
    const { once, twice } = await onceAndTwice(searchProjection, s.log.events, parts);
    expect(once).toEqual([
      [
        { documentId: 'd1', text: 'whales sing', documentMetadata: { lang: 'en' } },
        { documentId: 'd1', text: 'at night', documentMetadata: { lang: 'en' } },
      ],
      [],
      [{ documentId: 'd3', text: 'rays glide', documentMetadata: { id: 'd3' } }],
      [],
    ]);
    expect(twice).toEqual(once);
  });
});
