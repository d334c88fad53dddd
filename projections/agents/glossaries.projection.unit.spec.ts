import { GLOSSARIES, GLOSSARY_ENTRIES } from '@lib/agents/read-models';
import { EventLog, given, onceAndTwice } from '@lib/testing';
import { glossariesProjection } from './glossaries.projection';

describe('glossaries projection', () => {
  const log = new EventLog();
  log.append('glossary-g', 'GlossaryCreated', { key: 'g', name: 'G', createdAt: '2026-01-01T00:00:00.000Z' });
  log.append('glossary-g', 'GlossaryEntriesUpserted', { key: 'g', entries: { a: 'alpha', b: 'beta' }, at: '2026-01-02T00:00:00.000Z' });
  log.append('glossary-g', 'GlossaryEntriesUpserted', { key: 'g', entries: { a: 'ALPHA' }, at: '2026-01-03T00:00:00.000Z' });
  log.append('glossary-g', 'GlossaryEntriesDeleted', { key: 'g', terms: ['b'], at: '2026-01-04T00:00:00.000Z' });
  log.append('glossary-h', 'GlossaryCreated', { key: 'h', name: 'H', createdAt: '2026-01-01T00:00:00.000Z' });
  log.append('glossary-h', 'GlossaryEntriesUpserted', { key: 'h', entries: { z: 'zeta' }, at: '2026-01-02T00:00:00.000Z' });
  log.append('glossary-h', 'GlossaryDeleted', { key: 'h', deletedAt: '2026-01-05T00:00:00.000Z' });

  it('keeps the latest expansion of each term, and drops deleted terms and glossaries', async () => {
    const harness = await given(log.events).project(glossariesProjection);
    expect((await harness.reads.find(GLOSSARY_ENTRIES, { limit: 10 })).items.map((e) => [e.term, e.expansion])).toEqual([['a', 'ALPHA']]);
    expect(await harness.reads.get(GLOSSARIES, 'g')).toMatchObject({ updated_at: '2026-01-04T00:00:00.000Z' });
    expect(await harness.reads.get(GLOSSARIES, 'h')).toBeUndefined();
    harness.close();
  });

  it('applying every event twice changes nothing', async () => {
    const { once, twice } = await onceAndTwice(glossariesProjection, log.events);
    expect(twice).toEqual(once);
  });
});
