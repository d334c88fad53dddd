import { Injectable } from '@nestjs/common';
import type { ToolConfig } from '../../domain/tool-config';
import { ArtifactBytes } from './artifact-bytes.port';
import type { Tool, ToolContext, ToolDefinition, ToolResult } from './tool.port';

export const SCRATCH_PAD_BYTES = { default: 1_048_576, max: 10_485_760 } as const;
const OPERATIONS = ['read', 'write', 'append', 'replace', 'clear'] as const;
const PAD_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const err = (message: string): ToolResult => ({ output: { error: message }, error: true });

/**
 * Named pads the agent writes notes to, kept as session artifacts (`art_pad_<name>`, one version per write, the
 * newest replacing the older in the session's list): `read`, `write`, `append`, `replace` (every occurrence),
 * `clear`; at most `max_bytes` (1 MB default, up to 10 MB). Operations on one pad of one session run one at a time.
 */
@Injectable()
export class ScratchPadTool implements Tool {
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(private readonly store: ArtifactBytes) {}

  definition(name: string, config: ToolConfig): ToolDefinition {
    return {
      type: 'function',
      function: {
        name,
        description: config.description ?? 'Keeps notes across the conversation in named pads: read, write, append, replace (old → new), clear.',
        parameters: {
          type: 'object',
          properties: { operation: { type: 'string', enum: [...OPERATIONS] }, pad: { type: 'string', description: 'Pad name (default "default")' }, content: { type: 'string' }, old: { type: 'string' }, new: { type: 'string' } },
          required: ['operation'],
        },
      },
    };
  }

  async run(config: ToolConfig, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const pad = String(args.pad ?? 'default');
    if (!PAD_NAME.test(pad)) return err('pad must be 1 to 64 letters, digits, underscores or hyphens');
    if (!(OPERATIONS as readonly string[]).includes(String(args.operation))) return err(`operation must be one of ${OPERATIONS.join(', ')}`);
    if (!ctx.artifactsNow || !ctx.storeArtifact) return err('scratch pads need a session (not available while one is created)');
    const key = `${ctx.agentKey}/${ctx.sessionKey}/${pad}`;
    const previous = this.locks.get(key) ?? Promise.resolve();
    const next = previous.then(() => this.operate(config, pad, args, ctx));
    const settled = next.catch(() => undefined);
    this.locks.set(key, settled);
    void settled.then(() => {
      if (this.locks.get(key) === settled) this.locks.delete(key);
    });
    return next;
  }

  private async operate(config: ToolConfig, pad: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const artifactId = `art_pad_${pad}`;
    const found = ctx.artifactsNow!().find((a) => a.artifactId === artifactId);
    const current = found ? (await this.store.get(found.sha256)).toString('utf8') : '';
    const max = Math.min(SCRATCH_PAD_BYTES.max, Number(config.max_bytes ?? SCRATCH_PAD_BYTES.default));
    const text = (name: string) => (typeof args[name] === 'string' ? (args[name] as string) : undefined);
    let next: string;
    switch (args.operation) {
      case 'read':
        return { output: { pad, content: current, size_bytes: Buffer.byteLength(current) }, error: false };
      case 'write':
        if (text('content') === undefined) return err('write needs content');
        next = text('content')!;
        break;
      case 'append':
        if (text('content') === undefined) return err('append needs content');
        next = current + text('content')!;
        break;
      case 'replace': {
        const old = text('old');
        if (!old || text('new') === undefined) return err('replace needs old (not empty) and new');
        if (!current.includes(old)) return err(`"${old.slice(0, 80)}" is not in pad ${pad}`);
        next = current.split(old).join(text('new')!);
        break;
      }
      default:
        next = '';
    }
    const bytes = Buffer.from(next, 'utf8');
    if (bytes.length > max) return err(`pad ${pad} would hold ${bytes.length} bytes, over its ${max}: nothing was written`);
    await ctx.storeArtifact!({ artifactId, filename: `${pad}.md`, mimeType: 'text/markdown', bytes, metadata: { scratch_pad: pad } });
    return { output: { pad, operation: args.operation, size_bytes: bytes.length }, error: false };
  }
}
