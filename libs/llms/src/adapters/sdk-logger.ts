import { Logger } from '@nestjs/common';
import { scrub } from '../application/provider/upstream-failure.port';

/**
 * The logger handed to a provider SDK (they log to the console by default, and to debug when an environment
 * variable says so): warnings and errors go to the service's log, scrubbed of the credential; nothing finer.
 */
export function sdkLogger(provider: string, secrets: readonly string[]) {
  const log = new Logger(`llms.${provider}`);
  const line = (args: unknown[]) => scrub(args.map((a) => (typeof a === 'string' ? a : a instanceof Error ? a.message : '')).filter(Boolean).join(' '), secrets);
  const ignore = () => undefined;
  return { error: (...args: unknown[]) => log.error(line(args)), warn: (...args: unknown[]) => log.warn(line(args)), info: ignore, debug: ignore };
}
