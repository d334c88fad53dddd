import { Injectable } from '@nestjs/common';
import { DomainError } from '@lib/platform';
import { Glossaries } from '../glossaries/glossaries';
import type { Tool, ToolConfig, ToolContext, ToolDefinition, ToolResult } from '@lib/tools';

const err = (message: string): ToolResult => ({ output: { error: message }, error: true });

function commandOf(ctx: ToolContext) {
  return ctx.command ? { ...ctx.command, actor: { type: 'agent' as const, id: ctx.agentKey }, commandId: `${ctx.command.commandId}:${ctx.toolCallId ?? 'glossary'}` } : undefined;
}

/** Adds or replaces terms of a glossary (`glossary_key`, usually fixed by the configuration). */
@Injectable()
export class GlossaryPutEntriesTool implements Tool {
  constructor(private readonly glossaries: Glossaries) {}

  definition(name: string, config: ToolConfig): ToolDefinition {
    return { type: 'function', function: { name, description: config.description ?? 'Adds or replaces glossary terms and their expansions.', parameters: { type: 'object', properties: { glossary_key: { type: 'string' }, entries: { type: 'object', additionalProperties: { type: 'string' }, description: 'term → expansion' } }, required: ['glossary_key', 'entries'] } } };
  }

  async run(_config: ToolConfig, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const cmd = commandOf(ctx);
    if (!cmd) return err('glossaries are written within a session');
    if (typeof args.glossary_key !== 'string' || args.entries === null || typeof args.entries !== 'object' || Array.isArray(args.entries)) return err('glossary_key and entries {term: expansion} are required');
    try {
      await this.glossaries.upsert(args.glossary_key, args.entries as Record<string, unknown>, cmd);
      return { output: { glossary_key: args.glossary_key, upserted: Object.keys(args.entries).length }, error: false };
    } catch (e) {
      if (e instanceof DomainError) return err(e.message);
      throw e;
    }
  }
}

/** Removes terms from a glossary. */
@Injectable()
export class GlossaryDeleteEntriesTool implements Tool {
  constructor(private readonly glossaries: Glossaries) {}

  definition(name: string, config: ToolConfig): ToolDefinition {
    return { type: 'function', function: { name, description: config.description ?? 'Removes terms from a glossary.', parameters: { type: 'object', properties: { glossary_key: { type: 'string' }, terms: { type: 'array', items: { type: 'string' } } }, required: ['glossary_key', 'terms'] } } };
  }

  async run(_config: ToolConfig, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const cmd = commandOf(ctx);
    if (!cmd) return err('glossaries are written within a session');
    if (typeof args.glossary_key !== 'string' || !Array.isArray(args.terms) || !args.terms.every((t) => typeof t === 'string')) return err('glossary_key and terms [string] are required');
    try {
      await this.glossaries.deleteTerms(args.glossary_key, args.terms as string[], cmd);
      return { output: { glossary_key: args.glossary_key, deleted: args.terms.length }, error: false };
    } catch (e) {
      if (e instanceof DomainError) return err(e.message);
      throw e;
    }
  }
}
