import { conflict, DomainError, invalid, notFound } from '@lib/platform/kernel';
import { Capability, capabilitiesOf, Grants, notCovered } from './roles';

/** The account owner created at first start; it cannot be disabled, deleted or lose the owner role. */
export const OWNER_USERNAME = 'owner';

export type UserEvent =
  | {
      type: 'UserCreated';
      data: { userId: string; username: string; email: string; description: string; grants: Grants; createdAt: string };
    }
  | { type: 'UserRolesChanged'; data: { userId: string; username: string; grants: Grants; at: string } }
  | { type: 'UserDescriptionChanged'; data: { userId: string; username: string; description: string; at: string } }
  | { type: 'UserDisabled'; data: { userId: string; username: string; at: string } }
  | { type: 'UserEnabled'; data: { userId: string; username: string; at: string } }
  | { type: 'UserDeleted'; data: { userId: string; username: string; at: string } };

export type UserState =
  | { status: 'absent' }
  | { status: 'active' | 'disabled'; userId: string; username: string; grants: Grants; description: string };

export const userFold = {
  initialState: { status: 'absent' } as UserState,
  evolve(state: UserState, e: UserEvent): UserState {
    switch (e.type) {
      case 'UserCreated':
        return { status: 'active', userId: e.data.userId, username: e.data.username, grants: e.data.grants, description: e.data.description };
      case 'UserRolesChanged':
        return state.status === 'absent' ? state : { ...state, grants: e.data.grants };
      case 'UserDescriptionChanged':
        return state.status === 'absent' ? state : { ...state, description: e.data.description };
      case 'UserDisabled':
        return state.status === 'absent' ? state : { ...state, status: 'disabled' };
      case 'UserEnabled':
        return state.status === 'absent' ? state : { ...state, status: 'active' };
      case 'UserDeleted':
        return { status: 'absent' };
    }
  },
};

const USERNAME = /^[A-Za-z0-9._@+-]{1,100}$/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}$/;

/** Whoever assigns roles must hold what they assign (an administrator cannot make an owner). */
export function assertAssignable(grants: Grants, actorCaps: readonly Capability[], field = 'api_roles'): void {
  const missing = notCovered(capabilitiesOf(grants), actorCaps);
  if (missing.length) {
    throw new DomainError('forbidden', 'auth.escalation', `You cannot grant roles you do not hold (${missing[0].action} on ${missing[0].scope})`, {
      fieldErrors: { [field]: 'grants more than the caller holds' },
    });
  }
}

export interface CreateUserInput {
  readonly username: string;
  readonly email: string;
  readonly description: string;
  readonly grants: Grants;
}

export function decideCreateUser(state: UserState, input: CreateUserInput, actorCaps: readonly Capability[], now: Date, newId: () => string): UserEvent[] {
  if (!USERNAME.test(input.username)) throw invalid('user.invalid', 'username must be 1 to 100 letters, digits or ._@+-', { username: 'invalid characters or length' });
  if (!EMAIL.test(input.email)) throw invalid('user.invalid', 'email must be an email address', { email: 'must be an email address' });
  if (state.status !== 'absent') throw invalid('user.exists', `A user named "${input.username}" already exists`, { username: 'already exists' });
  assertAssignable(input.grants, actorCaps);
  return [{ type: 'UserCreated', data: { userId: newId(), username: input.username, email: input.email, description: input.description, grants: input.grants, createdAt: now.toISOString() } }];
}

export interface UpdateUserInput {
  readonly enabled?: boolean;
  readonly description?: string;
  readonly grants?: Grants;
}

export function decideUpdateUser(state: UserState, username: string, input: UpdateUserInput, actorCaps: readonly Capability[], now: Date): UserEvent[] {
  if (state.status === 'absent') throw notFound('user.not_found', `User "${username}" not found`, username);
  const base = { userId: state.userId, username: state.username, at: now.toISOString() };
  const events: UserEvent[] = [];
  if (input.grants) {
    if (state.username === OWNER_USERNAME && !input.grants.apiRoles.includes('owner')) throw conflict('user.owner', 'The account owner keeps the owner role');
    assertAssignable(input.grants, actorCaps);
    // Taking roles away also needs the caller to hold them: an administrator cannot demote an owner.
    assertAssignable(state.grants, actorCaps);
    // The same roles bound to the same corpora record nothing. Grants carry the id of the corpus each corpus role
    // was bound to (corpus-grants.ts), so the same roles again after a corpus was re-created under its key differ
    // (a new id) and are recorded: that is how a user's role reaches the new corpus.
    if (!sameGrants(input.grants, state.grants)) events.push({ type: 'UserRolesChanged', data: { ...base, grants: input.grants } });
  }
  if (input.description !== undefined && input.description !== state.description) {
    // Describing a user is administering them: the caller must hold what the user holds, as for disabling.
    assertAssignable(state.grants, actorCaps);
    events.push({ type: 'UserDescriptionChanged', data: { ...base, description: input.description } });
  }
  if (input.enabled === false && state.status === 'active') {
    if (state.username === OWNER_USERNAME) throw conflict('user.owner', 'The account owner cannot be disabled');
    assertAssignable(state.grants, actorCaps);
    events.push({ type: 'UserDisabled', data: base });
  }
  if (input.enabled === true && state.status === 'disabled') {
    // Enabling gives the user's roles back: the caller must be able to give them, as when granting them.
    assertAssignable(input.grants ?? state.grants, actorCaps);
    events.push({ type: 'UserEnabled', data: base });
  }
  return events;
}

const grantKeys = (g: Grants): string[] => [
  ...g.apiRoles.map((r) => `api:${r}`),
  ...g.corpusRoles.map((r) => `corpus:${r.corpusKey}:${r.corpusId ?? ''}:${r.role}`),
  ...g.agentRoles.map((r) => `agent:${r.agentKey}:${r.role}`),
].sort();

/** The same roles, whatever their order (and bound to the same corpora). */
export const sameGrants = (a: Grants, b: Grants): boolean => JSON.stringify([...new Set(grantKeys(a))]) === JSON.stringify([...new Set(grantKeys(b))]);

export function decideDeleteUser(state: UserState, username: string, actorCaps: readonly Capability[], now: Date): UserEvent[] {
  if (state.status === 'absent') throw notFound('user.not_found', `User "${username}" not found`, username);
  if (state.username === OWNER_USERNAME) throw conflict('user.owner', 'The account owner cannot be deleted');
  assertAssignable(state.grants, actorCaps);
  return [{ type: 'UserDeleted', data: { userId: state.userId, username: state.username, at: now.toISOString() } }];
}

