import { conflict, invalid, notFound } from '@lib/platform/kernel';
import { Capability, Grants } from './roles';
import { assertAssignable } from './user';

/** An app client: a service identity that gets OAuth 2.0 client-credentials tokens and acts with its own roles. */
export type AppClientEvent =
  | {
      type: 'AppClientCreated';
      data: { appClientId: string; name: string; description: string; clientId: string; secretDigest: string; grants: Grants; createdAt: string };
    }
  | { type: 'AppClientUpdated'; data: { appClientId: string; name?: string; description?: string; grants?: Grants; at: string } }
  | { type: 'AppClientDeleted'; data: { appClientId: string; at: string } };

export type AppClientState = { status: 'absent' } | { status: 'present'; appClientId: string; grants: Grants };

export const appClientFold = {
  initialState: { status: 'absent' } as AppClientState,
  evolve(state: AppClientState, e: AppClientEvent): AppClientState {
    switch (e.type) {
      case 'AppClientCreated':
        return { status: 'present', appClientId: e.data.appClientId, grants: e.data.grants };
      case 'AppClientUpdated':
        return state.status === 'absent' ? state : { ...state, grants: e.data.grants ?? state.grants };
      case 'AppClientDeleted':
        return { status: 'absent' };
    }
  },
};

export interface CreateAppClientInput {
  readonly name: string;
  readonly description: string;
  readonly clientId: string;
  readonly secretDigest: string;
  readonly grants: Grants;
}

function checkName(name: string | undefined): void {
  if (name !== undefined && (!name.trim() || name.length > 255)) throw invalid('app_client.invalid', 'name must be 1 to 255 characters', { name: 'must be 1 to 255 characters' });
}

export function decideCreateAppClient(state: AppClientState, appClientId: string, input: CreateAppClientInput, actorCaps: readonly Capability[], now: Date): AppClientEvent[] {
  if (state.status !== 'absent') throw conflict('app_client.exists', `App client ${appClientId} already exists`);
  checkName(input.name);
  assertAssignable(input.grants, actorCaps);
  return [{ type: 'AppClientCreated', data: { appClientId, ...input, createdAt: now.toISOString() } }];
}

export interface UpdateAppClientInput {
  readonly name?: string;
  readonly description?: string;
  readonly grants?: Grants;
}

export function decideUpdateAppClient(state: AppClientState, appClientId: string, input: UpdateAppClientInput, actorCaps: readonly Capability[], now: Date): AppClientEvent[] {
  if (state.status === 'absent') throw notFound('app_client.not_found', `App client ${appClientId} not found`, appClientId);
  checkName(input.name);
  if (input.grants) {
    assertAssignable(input.grants, actorCaps);
    assertAssignable(state.grants, actorCaps);
  }
  if (input.name === undefined && input.description === undefined && !input.grants) return [];
  return [{ type: 'AppClientUpdated', data: { appClientId, name: input.name, description: input.description, grants: input.grants, at: now.toISOString() } }];
}

export function decideDeleteAppClient(state: AppClientState, appClientId: string, actorCaps: readonly Capability[], now: Date): AppClientEvent[] {
  if (state.status === 'absent') throw notFound('app_client.not_found', `App client ${appClientId} not found`, appClientId);
  assertAssignable(state.grants, actorCaps);
  return [{ type: 'AppClientDeleted', data: { appClientId, at: now.toISOString() } }];
}
