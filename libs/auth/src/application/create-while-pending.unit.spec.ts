import type { ReadStore } from '@lib/platform';
import { capabilitiesOf, Grants } from '../domain/roles';
import { CreateApiKey, CreateApiKeyHandler } from './api-keys';
import { CreateAppClient, CreateAppClientHandler } from './app-clients';
import type { AuthWriter } from './auth-writer';
import type { CorpusGrants } from './corpus-grants';
import type { Principal } from './principal';

/** The read-your-writes bound ran out: the events are stored, the auth projection has not applied them yet. */
const pendingWriter = {
  write: async <S, E>(_stream: string, fold: { initialState: S }, decide: (s: S) => readonly E[]) => ({ events: decide(fold.initialState), position: 1, visible: false }),
} as unknown as AuthWriter;
const nothingProjected = { get: async () => undefined } as unknown as ReadStore;
const unbound = { bind: async (grants: Grants) => ({ grants, check: () => undefined }) } as unknown as CorpusGrants;
const ids = { uuid: () => 'u', numeric: (prefix: string) => `${prefix}_7` };
const now = new Date('2026-01-01T00:00:00.000Z');
const ctx = { actor: { type: 'user' as const, id: 'usr_1' }, requestId: 'r', commandId: 'r', now };
const grants: Grants = { apiRoles: [], corpusRoles: [{ corpusKey: 'c1', role: 'viewer' }], agentRoles: [] };
const admin: Principal = {
  actor: ctx.actor,
  caps: capabilitiesOf({ apiRoles: ['administrator'], corpusRoles: [{ corpusKey: 'c1', role: 'owner' }], agentRoles: [] }),
  user: { userId: 'usr_1', username: 'ada' },
  keyType: 'personal',
  bucket: 'b',
  ownerBucket: 'o',
};

describe('a create answered before the auth projection caught up', () => {
  it('API key: answers with the key as it will read, made from the stored event', async () => {
    const handler = new CreateApiKeyHandler(pendingWriter, nothingProjected, ids, unbound);
    const { view, visible } = await handler.execute(new CreateApiKey({ name: 'k', keyType: 'serving', grants }, admin, ctx));
    expect(visible).toBe(false);
    expect(view).toMatchObject({ id: 'aky_7', name: 'k', enabled: true, api_key_role: 'serving', owner_username: 'ada', created_at: now.toISOString() });
    expect(view.corpus_roles).toEqual([{ corpus_key: 'c1', role: 'viewer' }]);
    expect(view.secret_key).toContain('_aky_7_');
  });

  it('app client: answers with the client as it will read and its secret, once', async () => {
    const handler = new CreateAppClientHandler(pendingWriter, nothingProjected, ids, unbound);
    const { view, visible } = await handler.execute(new CreateAppClient({ name: 'svc', description: 'd', grants }, admin, ctx));
    expect(visible).toBe(false);
    expect(view).toMatchObject({ id: 'app_7', name: 'svc', description: 'd', created_at: now.toISOString(), updated_at: now.toISOString() });
    expect(view.client_secret).not.toBe('****');
    expect(view.corpus_roles).toEqual([{ corpus_key: 'c1', role: 'viewer' }]);
  });
});
