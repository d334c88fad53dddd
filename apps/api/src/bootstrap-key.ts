import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ServiceConfig } from '@lib/platform';

export const BOOTSTRAP_KEY_FILE = 'admin-api-key';

/**
 * The owner's bootstrap key: ADMIN_API_KEY when set; otherwise generated on first start, stored under
 * DATA_DIR with mode 0600, and printed once (to the terminal, never to the JSON log).
 */
export function resolveBootstrapKey(config: ServiceConfig, print: (line: string) => void): string {
  if (config.adminApiKey) return config.adminApiKey;
  const file = join(config.dataDir, BOOTSTRAP_KEY_FILE);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(config.dataDir, { recursive: true });
  const key = `zut_${randomBytes(32).toString('base64url')}`;
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  print(`\nGenerated the bootstrap owner API key (shown once; also stored in ${file}, mode 0600):\n\n  ${key}\n\nSend it as the x-api-key header.\n`);
  return key;
}
