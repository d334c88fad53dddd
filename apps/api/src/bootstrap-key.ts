import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BOOTSTRAP_KEY_ID, formatKey } from '@lib/auth';
import { ensurePrivateDir, ServiceConfig } from '@lib/platform';

export const BOOTSTRAP_KEY_FILE = 'admin-api-key';
export const SIGNING_KEY_FILE = 'oauth-signing-key';
export const SECRETS_KEY_FILE = 'secrets-key';

/** Reads a secret file under DATA_DIR, or creates it (mode 0600, never overwritten) with `make()`. */
function storedSecret(config: ServiceConfig, name: string, make: () => string): { value: string; created: boolean; file: string } {
  const file = join(config.dataDir, name);
  if (existsSync(file)) return { value: readFileSync(file, 'utf8').trim(), created: false, file };
  ensurePrivateDir(config.dataDir);
  const value = make();
  writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return { value, created: true, file };
}

/**
 * The owner's bootstrap key: ADMIN_API_KEY when set; otherwise generated on first start, stored under
 * DATA_DIR with mode 0600, and printed once (to the terminal, never to the JSON log).
 */
export function resolveBootstrapKey(config: ServiceConfig, print: (line: string) => void): string {
  if (config.adminApiKey) return config.adminApiKey;
  const { value, created, file } = storedSecret(config, BOOTSTRAP_KEY_FILE, () => formatKey('personal', BOOTSTRAP_KEY_ID, randomBytes(32).toString('base64url')));
  if (created) print(`\nGenerated the bootstrap owner API key (shown once; also stored in ${file}, mode 0600):\n\n  ${value}\n\nSend it as the x-api-key header.\n`);
  return value;
}

/** The HS256 key for OAuth access tokens: OAUTH_SIGNING_KEY, else generated once under DATA_DIR (0600). */
export function resolveSigningKey(config: ServiceConfig): string {
  return config.oauthSigningKey ?? storedSecret(config, SIGNING_KEY_FILE, () => randomBytes(48).toString('base64url')).value;
}

/**
 * The AES-256 key that seals stored credentials: SECRETS_KEY, else generated once under DATA_DIR (0600).
 * Every process sharing an event store needs the same key (docs/llms.md); losing it loses the credentials.
 */
export function resolveSecretsKey(config: ServiceConfig): Buffer {
  const text = config.secretsKey ?? storedSecret(config, SECRETS_KEY_FILE, () => randomBytes(32).toString('base64')).value;
  return /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
}
