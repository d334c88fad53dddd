import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, decideOnStream, EVENT_STORE, EventStore, ID_GENERATOR, IdGenerator, PROJECTION_PROGRESS, ProjectionProgress, SERVICE_CONFIG, ServiceConfig } from '@lib/platform';
import { ApiKeyEvent, apiKeyFold, ApiKeyState } from '../domain/api-key';
import { BOOTSTRAP_KEY_ID } from '../domain/credentials';
import { OWNER_USERNAME, UserEvent, userFold, UserState } from '../domain/user';
import { KeyDigests } from './key-digests';
import { apiKeyStream, AUTH_WRITE_VISIBILITY, userStream } from './streams';

/**
 * First start: the account's owner user and its personal key (the bootstrap key) come into being as ordinary
 * events. Later starts change nothing, except that a changed ADMIN_API_KEY replaces the key's digest: that is
 * how the bootstrap key is rotated. Safe to run from several processes at once (expected-revision appends).
 * Restarts are idempotent by the streams' state (an owner exists; the stored digest is this key's), not by
 * event ids: nothing about the key, not even a digest, goes into the command id, which events carry as
 * `causationId` and from which their ids derive. The digest itself is keyed (KeyDigests).
 */
@Injectable()
export class Bootstrap {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    private readonly digests: KeyDigests,
  ) {}

  /** Returns whether the auth read model shows the owner and key when it returns. */
  async ensureOwner(bootstrapKey: string, now: Date): Promise<boolean> {
    const digest = this.digests.bootstrapDigest(bootstrapKey);
    const digestKind = this.digests.kind;
    const requestId = `bootstrap-${this.ids.uuid()}`;
    const ctx: CommandContext = { actor: { type: 'system', id: 'bootstrap' }, requestId, commandId: requestId, now };
    const user = await decideOnStream(
      this.store,
      userStream(OWNER_USERNAME),
      userFold,
      (s: UserState): UserEvent[] =>
        s.status !== 'absent'
          ? []
          : [
              {
                type: 'UserCreated',
                data: {
                  userId: this.ids.numeric('usr'),
                  username: OWNER_USERNAME,
                  email: this.config.adminEmail,
                  description: 'Account owner, created at first start',
                  grants: { apiRoles: ['owner'], corpusRoles: [], agentRoles: [] },
                  createdAt: now.toISOString(),
                },
              },
            ],
      ctx,
    );
    const owner = (await this.store.readStream(userStream(OWNER_USERNAME)))[0].data as { userId: string };
    const key = await decideOnStream(
      this.store,
      apiKeyStream(BOOTSTRAP_KEY_ID),
      apiKeyFold,
      (s: ApiKeyState): ApiKeyEvent[] => {
        if (s.status === 'absent') {
          return [
            {
              type: 'ApiKeyCreated',
              data: {
                keyId: BOOTSTRAP_KEY_ID,
                name: 'Bootstrap owner key',
                keyType: 'personal',
                grants: { apiRoles: [], corpusRoles: [], agentRoles: [] },
                creator: { kind: 'user', userId: owner.userId, username: OWNER_USERNAME },
                digest,
                digestKind,
                createdAt: now.toISOString(),
              },
            },
          ];
        }
        // A plain digest written before digests were keyed is replaced too, so it stops being the one in use.
        return s.digest === digest && s.digestKind === digestKind ? [] : [{ type: 'ApiKeySecretReplaced', data: { keyId: BOOTSTRAP_KEY_ID, digest, digestKind, at: now.toISOString() } }];
      },
      ctx,
    );
    return this.progress.waitFor(Math.max(user.position, key.position), AUTH_WRITE_VISIBILITY, this.config.readYourWritesTimeoutMs);
  }
}
