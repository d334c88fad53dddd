import { DOCUMENT_IMAGES, DOCUMENTS } from '@lib/corpora/read-models';
import { corporaHistory, given, onceAndTwice, racedHistory } from '@lib/testing';
import { documentsProjection } from './documents.projection';

describe('documents projection', () => {
  it('keeps parts, removes deleted documents and every document of a deleted corpus', async () => {
    const s = corporaHistory();
    s.created('a');
    s.created('b');
    s.indexed('a', 'd1', ['one']);
    s.indexed('b', 'd2', ['two']);
    const h = await given(s.log.events).project(documentsProjection);
    expect(await h.reads.get(DOCUMENTS, 'a/d1')).toMatchObject({ document_id: 'd1', parts: [{ text: 'one' }] });
    s.deleted('a');
    await h.project(s.log.events.slice(-1));
    expect(await h.reads.get(DOCUMENTS, 'a/d1')).toBeUndefined();
    expect(await h.reads.get(DOCUMENTS, 'b/d2')).toBeDefined();
    await h.replay(s.log.events);
    expect(await h.reads.count(DOCUMENTS, [{ field: 'corpus_key', op: 'in', value: ['a', 'b'] }])).toBe(1);
    h.close();
  });

  it('leaves out document writes decided against a corpus that was reset or deleted before they were appended', async () => {
    const s = racedHistory();
    const h = await given(s.log.events).project(documentsProjection);
    const docs = (await h.reads.find(DOCUMENTS, { where: [{ field: 'corpus_key', op: 'in', value: ['a', 'b'] }], limit: 10 })).items;
    expect(docs.map((d) => [d.id, d.metadata])).toEqual([['a/fresh', { id: 'fresh' }]]);
    await h.replay(s.log.events);
    expect(await h.reads.count(DOCUMENTS, [{ field: 'corpus_key', op: 'in', value: ['a', 'b'] }])).toBe(1);
    h.close();
  });

  it('applying every event twice changes nothing', async () => {
    const s = corporaHistory();
    s.created('a');
    s.indexed('a', 'd1', ['one'], 'crp_a', ['img1', 'img2']);
    s.indexed('a', 'd2', ['two'], 'crp_a', ['img3']);
    s.metadataUpdated('a', 'd1', { lang: 'en' }, 1);
    s.removed('a', 'd2', 1);
    s.created('b');
    s.indexed('b', 'd3', ['three'], 'crp_b', ['img4']);
    s.reset('b', 1);
    const { once, twice } = await onceAndTwice(documentsProjection, s.log.events);
    const fences = [{ id: '~fence/a', incarnation: 'crp_a' }, { id: '~fence/b', incarnation: 'crp_b~1' }];
    expect(once).toMatchObject({
      [DOCUMENTS]: [{ id: 'a/d1', metadata: { lang: 'en' }, images: [{ id: 'img1' }, { id: 'img2' }] }, ...fences],
      [DOCUMENT_IMAGES]: [{ id: 'a/d1/img1' }, { id: 'a/d1/img2' }, ...fences],
    });
    expect(twice).toEqual(once);
  });
});
