import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { DeleteDocument, IndexDocument, StructuredDocumentInput } from '@lib/corpora';
import { DomainError } from '@lib/platform';
import type { ToolConfig } from '../../domain/tool-config';
import type { Tool, ToolContext, ToolDefinition, ToolResult } from './tool.port';

const err = (message: string): ToolResult => ({ output: { error: message }, error: true });
export const MAX_INDEX_BATCH = 100;
const ID = /^[A-Za-z0-9_\-.]{1,100}$/;

interface DocIn {
  readonly id: string;
  readonly title?: string;
  readonly text?: string;
  readonly sections?: readonly { readonly title?: string; readonly text: string }[];
  readonly metadata?: Record<string, unknown>;
}

/** Why a document of a batch cannot be indexed, before anything happens; undefined when it can. */
function problemOf(d: unknown, i: number): string | undefined {
  if (d === null || typeof d !== 'object' || Array.isArray(d)) return `documents[${i}] must be an object`;
  const doc = d as Record<string, unknown>;
  if (typeof doc.id !== 'string' || !ID.test(doc.id)) return `documents[${i}].id must be 1 to 100 letters, digits, '_', '-' or '.'`;
  if (doc.title !== undefined && typeof doc.title !== 'string') return `documents[${i}].title must be a string`;
  if (doc.metadata !== undefined && (doc.metadata === null || typeof doc.metadata !== 'object' || Array.isArray(doc.metadata))) return `documents[${i}].metadata must be an object`;
  const sections = doc.sections;
  if (sections !== undefined && (!Array.isArray(sections) || sections.some((s) => s === null || typeof s !== 'object' || typeof (s as { text?: unknown }).text !== 'string'))) return `documents[${i}].sections must be [{title?, text}]`;
  if (typeof doc.text !== 'string' && !(Array.isArray(sections) && sections.length)) return `documents[${i}] needs text or sections`;
  return undefined;
}

/**
 * Indexes documents into a corpus for the agent (the spec's document-index tool): a batch is checked whole first
 * (a repeated id or a malformed document refuses it before anything is deleted or indexed), then each document
 * is indexed in turn — not atomic: a later failure leaves the earlier ones indexed, and says which. `reindex`
 * deletes a document first, so a retry repeats delete-and-create. `wait_for`: `searchable` (default) waits until
 * queries find it, `indexed` returns once it is durably stored. The identity must write the corpus.
 */
@Injectable()
export class DocumentIndexTool implements Tool {
  constructor(private readonly commands: CommandBus) {}

  definition(name: string, config: ToolConfig): ToolDefinition {
    return {
      type: 'function',
      function: {
        name,
        description: config.description ?? 'Indexes documents into a corpus so they can be searched.',
        parameters: {
          type: 'object',
          properties: {
            corpus_key: { type: 'string' },
            documents: {
              type: 'array',
              items: { type: 'object', properties: { id: { type: 'string' }, title: { type: 'string' }, text: { type: 'string' }, sections: { type: 'array', items: { type: 'object', properties: { title: { type: 'string' }, text: { type: 'string' } }, required: ['text'] } }, metadata: { type: 'object' } }, required: ['id'] },
            },
            reindex: { type: 'boolean' },
            wait_for: { type: 'string', enum: ['searchable', 'indexed'] },
          },
          required: ['corpus_key', 'documents'],
        },
      },
    };
  }

  async run(_config: ToolConfig, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const corpus = args.corpus_key;
    if (typeof corpus !== 'string' || !corpus) return err('corpus_key is required');
    const docs = args.documents;
    if (!Array.isArray(docs) || docs.length === 0) return err('documents must be a non-empty array');
    if (docs.length > MAX_INDEX_BATCH) return err(`at most ${MAX_INDEX_BATCH} documents per call`);
    const waitFor = args.wait_for ?? 'searchable';
    if (waitFor !== 'searchable' && waitFor !== 'indexed') return err('wait_for must be searchable or indexed');
    for (const [i, d] of docs.entries()) {
      const problem = problemOf(d, i);
      if (problem) return err(`${problem}: nothing was indexed`);
    }
    const seen = new Set<string>();
    for (const d of docs as DocIn[]) {
      if (seen.has(d.id)) return err(`document id "${d.id}" appears twice in the batch: nothing was deleted or indexed; correct the batch and retry`);
      seen.add(d.id);
    }
    if (!ctx.canWriteCorpus || !(await ctx.canWriteCorpus(corpus))) return err(`corpus "${corpus}" does not exist or the agent's identity may not write to it`);
    if (!ctx.command) return err('indexing needs a request to act for');
    const cmd = { ...ctx.command, actor: { type: 'agent' as const, id: ctx.agentKey } };
    const done: { id: string; parts: number }[] = [];
    for (const [i, d] of (docs as DocIn[]).entries()) {
      const input: StructuredDocumentInput = {
        type: 'structured',
        id: d.id,
        ...(d.title ? { title: d.title } : {}),
        metadata: d.metadata ?? {},
        sections: d.sections?.length ? d.sections.map((s) => ({ ...(s.title ? { title: s.title } : {}), text: s.text })) : [{ text: d.text! }],
      };
      const step = { ...cmd, commandId: `${cmd.commandId}:${ctx.toolCallId ?? 'index'}:${i}` };
      try {
        if (args.reindex === true) await this.commands.execute(new DeleteDocument(corpus, d.id, step)).catch((e: unknown) => (e instanceof DomainError && e.kind === 'not_found' ? undefined : Promise.reject(e)));
        const result = await this.commands.execute(new IndexDocument(corpus, input, waitFor, { ...step, commandId: `${step.commandId}:create` }));
        done.push({ id: d.id, parts: (result as { value: { stats: { parts: number } } }).value.stats.parts });
      } catch (e) {
        if (!(e instanceof DomainError)) throw e;
        return { output: { corpus_key: corpus, indexed: done, failed: { id: d.id, error: e.message }, note: 'indexing is not atomic: the documents before this one are indexed; retry with reindex=true to repeat delete-and-create' }, error: true };
      }
    }
    return { output: { corpus_key: corpus, indexed: done, wait_for: waitFor }, error: false };
  }
}
