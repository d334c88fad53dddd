import { ConfigError, loadConfig } from '@lib/platform';
import { createLogger } from '../api/src/logger';
import { createInfrastructure } from '../infrastructure/infrastructure';

const USAGE = `usage: npm run projections -- <command>
  list                      each projection: generation, checkpoint, lag
  rebuild NAME              replay the whole log into a fresh copy of NAME, then swap it in
  dead-letters [NAME]       events parked because a projection could not apply them
  replay NAME POSITION      re-apply a parked event (after a fix) and remove it from the dead letters`;

/** Operator commands on the projections of the configured stores; safe while the service runs. */
async function main(argv: string[]): Promise<number> {
  const [command, name, position] = argv;
  if (!command || !['list', 'rebuild', 'dead-letters', 'replay'].includes(command)) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const config = loadConfig();
  const infra = await createInfrastructure(config, 'worker', createLogger(process.env.LOG_LEVEL ?? 'warn'));
  const runtime = infra.runtime!;
  const out = (v: unknown) => process.stdout.write(`${JSON.stringify(v, null, 2)}\n`);
  try {
    await runtime.init();
    switch (command) {
      case 'list':
        out(await runtime.lag());
        break;
      case 'rebuild': {
        if (!name) throw new ConfigError([`rebuild needs a projection name: ${runtime.names().join(', ')}`]);
        const started = Date.now();
        await runtime.rebuild(name);
        out({ rebuilt: name, ms: Date.now() - started, ...(await runtime.lag()).find((l) => l.projection === name) });
        break;
      }
      case 'dead-letters':
        out(await runtime.deadLetters(name));
        break;
      case 'replay': {
        const pos = Number(position);
        if (!name || !Number.isSafeInteger(pos)) throw new ConfigError(['replay needs a projection name and an event position']);
        await runtime.replay(name, pos);
        out({ replayed: { projection: name, position: pos } });
        break;
      }
    }
    return 0;
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  } finally {
    await infra.close();
  }
}

main(process.argv.slice(2)).then((code) => process.exit(code));
