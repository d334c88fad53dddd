import { CORPORA } from '@lib/corpora/read-models';
import { corporaHistory, given, onceAndTwice, racedHistory } from '@lib/testing';
import { corporaProjection } from './corpora.projection';

describe('corpora projection', () => {
  it('counts documents, parts and characters; replaying a suffix changes nothing', async () => {
    const s = corporaHistory();
    s.created('a');
    s.indexed('a', 'd1', ['one', 'two']);
    s.indexed('a', 'd2', ['three']);
    s.removed('a', 'd1', 2);
    const h = await given(s.log.events).project(corporaProjection);
    const expected = { id: 'a', corpus_id: 'crp_a', used_docs: 1, used_parts: 1, used_characters: 10 };
    expect(await h.reads.get(CORPORA, 'a')).toMatchObject(expected);
    await h.replay(s.log.events.slice(1));
    expect(await h.reads.get(CORPORA, 'a')).toMatchObject(expected);
    h.close();
  });

  it('counts no document write decided against a corpus that was reset or deleted before it was appended', async () => {
    const h = await given(racedHistory().log.events).project(corporaProjection);
    expect(await h.reads.get(CORPORA, 'a')).toMatchObject({ used_docs: 1, used_parts: 1, epoch: 1, incarnation: 'crp_a~1' });
    expect(await h.reads.get(CORPORA, 'b')).toMatchObject({ corpus_id: 'crp_b2', used_docs: 0, used_parts: 0 });
    h.close();
  });

  it('marks a corpus that holds tables or images (so queries read attachments only there), until a reset', async () => {
    const s = corporaHistory();
    s.created('a');
    s.indexed('a', 'plain', ['text only']);
    s.created('b');
    s.indexed('b', 'pictured', ['a caption'], 'crp_b', ['img1']);
    const h = await given(s.log.events).project(corporaProjection);
    expect((await h.reads.get(CORPORA, 'a'))?.has_attachments).toBe(false);
    expect((await h.reads.get(CORPORA, 'b'))?.has_attachments).toBe(true);
    s.reset('b', 1);
    await h.replay(s.log.events.slice(-1));
    expect((await h.reads.get(CORPORA, 'b'))?.has_attachments).toBe(false);
    h.close();
  });

  it('applying every event twice changes nothing', async () => {
    const s = corporaHistory();
    s.created('a');
    s.updated('a', 'renamed');
    s.indexed('a', 'd1', ['one', 'two']);
    s.indexed('a', 'd2', ['three']);
    s.removed('a', 'd1', 2);
    s.filterAttributes('a', ['lang']);
    s.created('b');
    s.indexed('b', 'd1', ['x']);
    s.reset('b', 1);
    s.created('c');
    s.deleted('c');
    const { once, twice } = await onceAndTwice(corporaProjection, s.log.events);
    expect(once).toMatchObject({
      corpora: [
        { id: 'a', name: 'renamed', used_docs: 1, used_parts: 1, filter_attributes: [{ name: 'lang' }] },
        { id: 'b', used_docs: 0, epoch: 1 },
      ],
    });
    expect(twice).toEqual(once);
  });
});
