import { streamId } from '@lib/platform';

export const userStream = (username: string): string => streamId('user', username);
export const apiKeyStream = (keyId: string): string => streamId('apikey', keyId);
export const appClientStream = (appClientId: string): string => streamId('appclient', appClientId);

/** The projection whose read models authentication reads: auth writes wait for it before answering. */
export const AUTH_PROJECTION = 'auth';
export const AUTH_WRITE_VISIBILITY = [AUTH_PROJECTION] as const;
