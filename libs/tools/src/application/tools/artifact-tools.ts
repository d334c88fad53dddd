import { Injectable } from '@nestjs/common';
import { Sandbox, SandboxError } from '../sandbox.port';
import type { ToolConfig } from '../../domain/tool-config';
import { ArtifactBytes } from './artifact-bytes.port';
import type { Tool, ToolContext, ToolDefinition, ToolResult } from './tool.port';

const err = (message: string): ToolResult => ({ output: { error: message }, error: true });

/** The reference's ArtifactReadConfiguration bounds. */
export const ARTIFACT_READ_LIMITS = { maxSizeBytes: { min: 1, max: 10_485_760, default: 262_144 }, maxLines: { min: 1, max: 10_000, default: 200 } } as const;

const artifactIdParam = { artifact_id: { type: 'string', description: 'The id of a session artifact (art_…)' } };

/** The artifact's bytes, or a tool error naming what is wrong. */
async function artifactOf(ctx: ToolContext, store: ArtifactBytes, id: unknown): Promise<{ bytes: Buffer; filename: string } | ToolResult> {
  const found = ctx.session?.artifacts.find((a) => a.artifactId === id);
  if (!found) return err(`no artifact "${String(id)}" in this session`);
  return { bytes: await store.get(found.sha256), filename: found.filename };
}

/** Reads an artifact: a range of lines as text, or its bytes as Base64, within the configuration's bounds. */
@Injectable()
export class ArtifactReadTool implements Tool {
  constructor(private readonly store: ArtifactBytes) {}

  definition(name: string, config: ToolConfig): ToolDefinition {
    return {
      type: 'function',
      function: {
        name,
        description: config.description ?? 'Reads lines of a session artifact (a file uploaded to the session or a large tool output stored there).',
        parameters: { type: 'object', properties: { ...artifactIdParam, start_line: { type: 'integer', minimum: 1 }, end_line: { type: 'integer', minimum: 1 }, encoding: { type: 'string', enum: ['raw', 'base64'] } }, required: ['artifact_id'] },
      },
    };
  }

  async run(config: ToolConfig, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const found = await artifactOf(ctx, this.store, args.artifact_id);
    if ('output' in found) return found;
    const limits = (config.tool_configuration ?? {}) as { max_size_bytes?: number; max_lines?: number };
    const maxBytes = limits.max_size_bytes ?? ARTIFACT_READ_LIMITS.maxSizeBytes.default;
    if (args.encoding === 'base64') {
      const cut = found.bytes.length > maxBytes;
      return { output: { artifact_id: args.artifact_id, filename: found.filename, size_bytes: found.bytes.length, content_base64: found.bytes.subarray(0, maxBytes).toString('base64'), ...(cut ? { truncated: true } : {}) }, error: false };
    }
    const lines = found.bytes.toString('utf8').split('\n');
    const start = Math.max(1, Math.trunc(Number(args.start_line ?? 1)) || 1);
    const maxLines = limits.max_lines ?? ARTIFACT_READ_LIMITS.maxLines.default;
    const end = Math.min(lines.length, Math.trunc(Number(args.end_line ?? start + maxLines - 1)) || lines.length, start + maxLines - 1);
    let content = lines.slice(start - 1, end).join('\n');
    const cut = Buffer.byteLength(content) > maxBytes;
    if (cut) content = Buffer.from(content).subarray(0, maxBytes).toString('utf8');
    return { output: { artifact_id: args.artifact_id, filename: found.filename, start_line: start, end_line: end, total_lines: lines.length, content, ...(cut || end < lines.length ? { more: true } : {}) }, error: false };
  }
}

/**
 * Searches an artifact's lines with a regular expression and grep's options (`-i`, `-v`, `-c`, `-m N`); the
 * pattern runs on the sandbox pool with a deadline, since a pattern can backtrack for ever.
 */
@Injectable()
export class ArtifactGrepTool implements Tool {
  constructor(
    private readonly store: ArtifactBytes,
    private readonly sandbox: Sandbox,
  ) {}

  definition(name: string, config: ToolConfig): ToolDefinition {
    return {
      type: 'function',
      function: {
        name,
        description: config.description ?? 'Finds the lines of a session artifact that match a regular expression.',
        parameters: { type: 'object', properties: { ...artifactIdParam, pattern: { type: 'string' }, grep_options: { type: 'array', items: { type: 'string' }, description: 'grep options: -i, -v, -c, -m N' } }, required: ['artifact_id', 'pattern'] },
      },
    };
  }

  async run(_config: ToolConfig, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    if (typeof args.pattern !== 'string' || !args.pattern) return err('pattern must be a non-empty regular expression');
    const options = Array.isArray(args.grep_options) ? args.grep_options.map(String) : [];
    const unknown = options.find((o, i) => !['-i', '-v', '-c', '-n', '-m'].includes(o) && options[i - 1] !== '-m');
    if (unknown) return err(`unknown grep option ${unknown} (supported: -i, -v, -c, -n, -m N)`);
    const m = options.indexOf('-m');
    const maxMatches = m >= 0 ? Math.max(1, Math.trunc(Number(options[m + 1])) || 1) : 200;
    const found = await artifactOf(ctx, this.store, args.artifact_id);
    if ('output' in found) return found;
    try {
      new RegExp(args.pattern);
    } catch (e) {
      return err(`pattern is not a valid regular expression: ${(e as Error).message}`);
    }
    try {
      const result = await this.sandbox.grep(found.bytes.toString('utf8'), args.pattern, { flags: options.includes('-i') ? 'i' : '', invert: options.includes('-v'), maxMatches });
      return { output: options.includes('-c') ? { artifact_id: args.artifact_id, count: result.count } : { artifact_id: args.artifact_id, matches: result.matches, count: result.count, total_lines: result.lines }, error: false };
    } catch (e) {
      if (e instanceof SandboxError) return err(`the pattern was stopped: ${e.message}`);
      throw e;
    }
  }
}

/** Runs a jq program over a JSON artifact (a large tool output stored as one, for example). */
@Injectable()
export class ArtifactJqTool implements Tool {
  constructor(
    private readonly store: ArtifactBytes,
    private readonly sandbox: Sandbox,
  ) {}

  definition(name: string, config: ToolConfig): ToolDefinition {
    return {
      type: 'function',
      function: {
        name,
        description: config.description ?? 'Runs a jq program over a JSON session artifact and returns its result.',
        parameters: { type: 'object', properties: { ...artifactIdParam, filter: { type: 'string', description: 'A jq program, e.g. .results[0:5] | map(.title)' } }, required: ['artifact_id', 'filter'] },
      },
    };
  }

  async run(_config: ToolConfig, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    if (typeof args.filter !== 'string' || !args.filter) return err('filter must be a jq program');
    const found = await artifactOf(ctx, this.store, args.artifact_id);
    if ('output' in found) return found;
    let input: unknown;
    try {
      input = JSON.parse(found.bytes.toString('utf8'));
    } catch {
      return err(`artifact ${String(args.artifact_id)} is not JSON`);
    }
    try {
      return { output: { artifact_id: args.artifact_id, result: await this.sandbox.jq(args.filter, input) }, error: false };
    } catch (e) {
      if (e instanceof SandboxError) return err(`jq: ${e.message}`);
      throw e;
    }
  }
}
