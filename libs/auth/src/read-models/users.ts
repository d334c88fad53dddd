import { collection } from '@lib/platform/projections';
import { toViewGrants, WireGrants } from '../domain/roles';
import { grantFields } from './grants';
import type { UserEvent } from '../domain/user';

/** One row per user, keyed by username (projections/auth). */
export type UserRow = WireGrants & {
  id: string;
  user_id: string;
  username: string;
  email: string;
  description: string;
  enabled: boolean;
  created_at: string;
  updated_at: string;
};

export const USERS = collection<UserRow>('users');

type UserCreated = Extract<UserEvent, { type: 'UserCreated' }>['data'];

/** The row a `UserCreated` makes. */
export const userRow = (d: UserCreated): UserRow => ({
  id: d.username,
  user_id: d.userId,
  username: d.username,
  email: d.email,
  description: d.description,
  enabled: true,
  ...grantFields(d.grants),
  created_at: d.createdAt,
  updated_at: d.createdAt,
});

/**
 * The reference's User requires an `email` in its `email` format (a dot in the domain). The owner made at first
 * start has none unless ADMIN_EMAIL gives one (stores from before kept `owner@localhost`): such a user is shown with
 * the local mailbox of its name on `localhost.localdomain`, the conventional name of the machine itself, rather than
 * an address somewhere else or none (docs/auth.md).
 */
const SHOWN_EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
export const LOCAL_MAIL_DOMAIN = 'localhost.localdomain';

export const userView = (r: UserRow) => ({
  id: r.user_id,
  email: SHOWN_EMAIL.test(r.email) ? r.email : `${r.username}@${LOCAL_MAIL_DOMAIN}`,
  username: r.username,
  enabled: r.enabled,
  description: r.description,
  created_at: r.created_at,
  updated_at: r.updated_at,
  ...toViewGrants(r),
});
