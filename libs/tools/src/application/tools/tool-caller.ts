import { Inject, Injectable, Logger } from '@nestjs/common';
import { DomainError } from '@lib/platform';
import { Sandbox, SANDBOX_DEADLINE_MS, SandboxError } from '../sandbox.port';
import type { ToolConfig } from '../../domain/tool-config';
import { AGENT_TOOLS, ToolContext, ToolRegistry, ToolResult } from './tool.port';

/** Why a call failed, for callers that answer differently by cause (session enrichment: 422, 502, 504). */
export type ToolFailure = 'configuration' | 'transform' | 'timeout' | 'tool';

/**
 * One call of a service tool, as every caller makes it (a turn, session enrichment): `input_transform` over the
 * context and the merged arguments, the run bounded by `max_execution_time_seconds`, `output_transform` over its
 * result. A failure is a tool error (the model sees it) with its cause.
 */
@Injectable()
export class ToolCaller {
  private readonly log = new Logger('agent-tools');

  constructor(
    @Inject(AGENT_TOOLS) private readonly tools: ToolRegistry,
    private readonly sandbox: Sandbox,
  ) {}

  async call(tool: ToolConfig, name: string, args: Record<string, unknown>, ctx: ToolContext, transformContext: Record<string, unknown>): Promise<ToolResult & { failure?: ToolFailure }> {
    const fail = (failure: ToolFailure, error: string) => ({ output: { error }, error: true, failure });
    const runner = this.tools.get(tool.type);
    if (!runner) return fail('configuration', `tool type ${tool.type} cannot run here`);
    const seconds = typeof tool.max_execution_time_seconds === 'number' ? tool.max_execution_time_seconds : undefined;
    const deadline = Math.min(SANDBOX_DEADLINE_MS, seconds ? seconds * 1000 : SANDBOX_DEADLINE_MS);
    let input = args;
    if (typeof tool.input_transform === 'string') {
      try {
        const out = await this.sandbox.jq(tool.input_transform, { ...transformContext, args }, deadline);
        if (out === null || typeof out !== 'object' || Array.isArray(out)) return fail('transform', `input_transform must give an object of arguments, not ${JSON.stringify(out)?.slice(0, 100)}`);
        input = out as Record<string, unknown>;
      } catch (e) {
        if (e instanceof SandboxError) return fail('transform', `input_transform failed: ${e.message}`);
        throw e;
      }
    }
    let result: ToolResult;
    // A call past its time is aborted, not only abandoned: the tool's own work (a request in flight) stops too.
    const own = new AbortController();
    try {
      result = await withTimeout(runner.run(tool, input, { ...ctx, signal: AbortSignal.any([ctx.signal, own.signal]) }), seconds);
    } catch (e) {
      if (e instanceof ToolTimeout) {
        own.abort();
        return fail('timeout', e.message);
      }
      if (!(e instanceof DomainError)) this.log.error(`tool ${name} failed: ${(e as Error).stack ?? String(e)}`);
      return fail('tool', e instanceof DomainError ? e.message : 'the tool failed');
    }
    if (result.error) return { ...result, failure: 'tool' };
    if (typeof tool.output_transform !== 'string') return result;
    try {
      const out = await this.sandbox.jq(tool.output_transform, result.output, deadline);
      return { output: out !== null && typeof out === 'object' && !Array.isArray(out) ? (out as Record<string, unknown>) : { result: out }, error: false };
    } catch (e) {
      if (e instanceof SandboxError) return fail('transform', `output_transform failed: ${e.message}`);
      throw e;
    }
  }
}

export class ToolTimeout extends Error {}

export function withTimeout<T>(work: Promise<T>, seconds: number | undefined): Promise<T> {
  if (!seconds) return work;
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new ToolTimeout(`the tool did not finish within max_execution_time_seconds (${seconds})`)), seconds * 1000)));
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
