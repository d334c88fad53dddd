import { loadEncoderConfig } from '@lib/encoders';
import { ConfigError, loadConfig } from '@lib/platform';
import { createLogger } from './api/src/logger';
import { startApp } from './app';
import type { Role } from './infrastructure/infrastructure';

function roleFromArgs(argv: string[]): Role {
  const arg = argv.find((a) => a.startsWith('--role='))?.slice('--role='.length) ?? 'all';
  if (arg !== 'all' && arg !== 'api' && arg !== 'worker') throw new ConfigError([`--role must be all, api or worker, got "${arg}"`]);
  return arg;
}

async function main(): Promise<void> {
  let config;
  let role: Role;
  try {
    config = loadConfig();
    // Checked here too, so a bad encoder variable is reported like any other before anything starts.
    loadEncoderConfig(config.env);
    role = roleFromArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
  }
  const log = createLogger(config.logLevel);
  try {
    const { app } = await startApp(config, role, log);
    let stopping = false;
    const shutdown = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'shutting down: draining requests, then closing stores');
      // app.close() stops accepting connections, waits for in-flight requests, then closes the adapters.
      app.close().then(
        () => {
          log.info('service stopped');
          process.exit(0);
        },
        (e: unknown) => {
          log.error({ err: e }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.on('SIGTERM', () => shutdown('SIGTERM'));
    process.on('SIGINT', () => shutdown('SIGINT'));
  } catch (e) {
    log.fatal({ err: e }, 'service failed to start');
    process.exit(1);
  }
}

void main();
