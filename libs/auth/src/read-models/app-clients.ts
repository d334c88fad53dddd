import { collection } from '@lib/platform/projections';
import type { AppClientEvent } from '../domain/app-client';
import { toViewGrants, WireGrants } from '../domain/roles';
import { grantFields } from './grants';

/** One row per app client, keyed by app client id (projections/auth). The digest is for the credential check only. */
export type AppClientRow = WireGrants & {
  id: string;
  name: string;
  description: string;
  client_id: string;
  secret_digest: string;
  created_at: string;
  updated_at: string;
};

export const APP_CLIENTS = collection<AppClientRow>('app_clients');

type AppClientCreated = Extract<AppClientEvent, { type: 'AppClientCreated' }>['data'];

/** The row an `AppClientCreated` makes; also the create response's source while the projection has not caught up. */
export const appClientRow = (d: AppClientCreated): AppClientRow => ({
  id: d.appClientId,
  name: d.name,
  description: d.description,
  client_id: d.clientId,
  secret_digest: d.secretDigest,
  ...grantFields(d.grants),
  created_at: d.createdAt,
  updated_at: d.createdAt,
});

export const appClientView = (r: AppClientRow, clientSecret?: string) => ({
  id: r.id,
  name: r.name,
  description: r.description,
  client_id: r.client_id,
  client_secret: clientSecret ?? '****',
  ...toViewGrants(r),
  created_at: r.created_at,
  updated_at: r.updated_at,
});
