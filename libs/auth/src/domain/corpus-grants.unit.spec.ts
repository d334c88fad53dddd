import { ApiKeyEvent, apiKeyFold } from './api-key';
import { bindCorpusRoles, LiveCorpus, liveCorpusRoles } from './corpus-grants';
import { fromWireGrants, Grants, NO_GRANTS, toViewGrants, toWireGrants } from './roles';

const live = (entries: Record<string, LiveCorpus>) => new Map(Object.entries(entries));
const viewerOn = (corpusKey: string, corpusId?: string): Grants => ({ ...NO_GRANTS, corpusRoles: [{ corpusKey, role: 'viewer', ...(corpusId ? { corpusId } : {}) }] });

describe('corpus roles bound to the corpus', () => {
  const now = live({ k: { corpusId: 'crp_2', createdAt: '2026-02-01T00:00:00.000Z' } });

  it('binds each role to the corpus its key names when granted, and reports keys that name none', () => {
    const grants: Grants = { ...NO_GRANTS, corpusRoles: [{ corpusKey: 'k', role: 'editor' }, { corpusKey: 'gone', role: 'viewer' }] };
    expect(bindCorpusRoles(grants, now)).toEqual({
      grants: { ...NO_GRANTS, corpusRoles: [{ corpusKey: 'k', role: 'editor', corpusId: 'crp_2' }, { corpusKey: 'gone', role: 'viewer' }] },
      missing: ['gone'],
    });
  });

  it('keeps a role while its corpus is the one under the key, drops it once the key names another corpus or none', () => {
    expect(liveCorpusRoles(viewerOn('k', 'crp_2'), now, '2026-03-01T00:00:00.000Z').corpusRoles).toHaveLength(1);
    expect(liveCorpusRoles(viewerOn('k', 'crp_1'), now, '2026-03-01T00:00:00.000Z').corpusRoles).toEqual([]);
    expect(liveCorpusRoles(viewerOn('k', 'crp_2'), live({}), '2026-03-01T00:00:00.000Z').corpusRoles).toEqual([]);
  });

  it('holds a role stored before binding when the corpus under its key is no newer than the grant', () => {
    expect(liveCorpusRoles(viewerOn('k'), now, '2026-02-01T00:00:00.000Z').corpusRoles).toHaveLength(1);
    expect(liveCorpusRoles(viewerOn('k'), now, '2026-01-31T23:59:59.999Z').corpusRoles).toEqual([]);
  });

  it('reads an ApiKeyCreated written before binding (corpus roles without ids), and its read-model row', () => {
    const old = JSON.parse(
      '{"type":"ApiKeyCreated","data":{"keyId":"aky_1","name":"r","keyType":"serving","grants":{"apiRoles":[],"corpusRoles":[{"corpusKey":"k","role":"viewer"}],"agentRoles":[]},"creator":{"kind":"user","userId":"usr_1","username":"owner"},"digest":"00","createdAt":"2026-02-02T00:00:00.000Z"}}',
    ) as Extract<ApiKeyEvent, { type: 'ApiKeyCreated' }>;
    expect(apiKeyFold.evolve(apiKeyFold.initialState, old)).toMatchObject({ status: 'enabled', keyId: 'aky_1' });
    const row = toWireGrants(old.data.grants);
    expect(row.corpus_roles).toEqual([{ corpus_key: 'k', role: 'viewer' }]);
    expect(liveCorpusRoles(fromWireGrants(row), now, old.data.createdAt).corpusRoles).toEqual([{ corpusKey: 'k', role: 'viewer' }]);
  });

  it('keeps the binding in read models and out of the API view', () => {
    const wire = toWireGrants(viewerOn('k', 'crp_2'));
    expect(wire.corpus_roles).toEqual([{ corpus_key: 'k', role: 'viewer', corpus_id: 'crp_2' }]);
    expect(fromWireGrants(wire)).toEqual(viewerOn('k', 'crp_2'));
    expect(toViewGrants(wire).corpus_roles).toEqual([{ corpus_key: 'k', role: 'viewer' }]);
  });
});
