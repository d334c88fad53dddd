import { Inject, Injectable } from '@nestjs/common';
import { documentReadId, DOCUMENTS, DocumentRow } from '@lib/corpora/read-models';
import { storeImage, storeTable } from './document-attachments';
import { READ_STORE, ReadStore } from '@lib/platform';
import type { ToolConfig } from '../../domain/tool-config';
import type { Tool, ToolContext, ToolDefinition, ToolResult } from './tool.port';

const err = (message: string): ToolResult => ({ output: { error: message }, error: true });

/** Text a document gives the model at most (the rest is said to be cut; artifact offloading takes big ones). */
const MAX_TEXT = 1_000_000;

/** What both document tools take: a corpus and a document in it. */
const DOCUMENT_PARAMETERS = { type: 'object', properties: { corpus_key: { type: 'string' }, document_id: { type: 'string' } }, required: ['corpus_key', 'document_id'] };

/**
 * The document a call names, read only where the agent's identity may read its corpus (as for `corpora_search`),
 * or the tool error to give the model.
 */
async function readableDocument(reads: ReadStore, args: Record<string, unknown>, ctx: ToolContext, needsSession = false): Promise<{ corpus: string; id: string; row: DocumentRow } | ToolResult> {
  const corpus = args.corpus_key;
  const id = args.document_id;
  if (typeof corpus !== 'string' || typeof id !== 'string' || !corpus || !id) return err('corpus_key and document_id are required');
  if (needsSession && !ctx.storeArtifact) return err('documents are read within a session');
  if (!(await ctx.canReadCorpus(corpus))) return err(`corpus "${corpus}" does not exist or the agent's identity may not read it`);
  const row = await reads.get<DocumentRow>(DOCUMENTS, documentReadId(corpus, id));
  if (!row) return err(`document "${id}" is not in corpus "${corpus}"`);
  return { corpus, id, row };
}

/**
 * A whole document's text from a corpus, section by section, with its metadata (the reference's
 * `get_document_text`; `metadata.include` and `exclude_paths` from its configuration). The agent's identity must
 * read the corpus, as for `corpora_search`.
 */
@Injectable()
export class GetDocumentTextTool implements Tool {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  definition(name: string, config: ToolConfig): ToolDefinition {
    return {
      type: 'function',
      function: {
        name,
        description: config.description ?? 'Returns the full text of a document of a corpus, by its id (found with a search first).',
        parameters: DOCUMENT_PARAMETERS,
      },
    };
  }

  async run(config: ToolConfig, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const found = await readableDocument(this.reads, args, ctx);
    if ('output' in found) return found;
    const { corpus, id, row } = found;
    const sections: string[] = [];
    let current: string | undefined;
    for (const part of row.parts) {
      if (part.sectionTitle && part.sectionTitle !== current) {
        current = part.sectionTitle;
        sections.push(`\n## ${current}\n`);
      }
      sections.push(part.text);
    }
    let text = sections.join('\n').trim();
    const cut = text.length > MAX_TEXT;
    if (cut) text = text.slice(0, MAX_TEXT);
    const settings = (config.tool_configuration ?? {}) as { metadata?: { include?: boolean; exclude_paths?: string[] } };
    const include = settings.metadata?.include !== false;
    const metadata = include ? withoutPaths(row.metadata as Record<string, unknown>, settings.metadata?.exclude_paths ?? []) : undefined;
    return { output: { corpus_key: corpus, document_id: id, ...(row.title ? { title: row.title } : {}), text, ...(metadata ? { metadata } : {}), ...(cut ? { truncated: true } : {}) }, error: false };
  }
}

function withoutPaths(metadata: Record<string, unknown>, paths: readonly string[]): Record<string, unknown> {
  const copy = structuredClone(metadata);
  for (const path of paths) {
    const keys = path.replace(/^\$\.?/, '').split('.').filter(Boolean);
    let at: unknown = copy;
    for (const k of keys.slice(0, -1)) at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[k] : undefined;
    if (at !== null && typeof at === 'object' && keys.length) delete (at as Record<string, unknown>)[keys[keys.length - 1]];
  }
  return copy;
}

/**
 * `get_document`: a document's text parts inline, and its tables and images as session artifacts made when the
 * document is asked for (a table as JSON, an image as its bytes), each named in the output by its artifact id so
 * the agent reads them with the artifact tools or `image_read` only if it needs them.
 */
@Injectable()
export class GetDocumentTool implements Tool {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  definition(name: string, config: ToolConfig): ToolDefinition {
    return {
      type: 'function',
      function: {
        name,
        description: config.description ?? "Returns a document of a corpus: its text, and its tables and images as artifacts to read when needed.",
        parameters: DOCUMENT_PARAMETERS,
      },
    };
  }

  async run(_config: ToolConfig, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const found = await readableDocument(this.reads, args, ctx, true);
    if ('output' in found) return found;
    const { corpus, id, row } = found;
    const store = ctx.storeArtifact!; // checked by readableDocument (needsSession)
    const parts = row.parts.filter((p) => !p.tableId && !p.imageId).map((p) => ({ text: p.text, ...(p.sectionTitle ? { section: p.sectionTitle } : {}) }));
    const tables = [];
    for (const t of row.tables ?? []) tables.push(await storeTable(store, corpus, id, t));
    const images = [];
    for (const meta of row.images ?? []) {
      const image = await storeImage(store, this.reads, corpus, id, meta);
      if (image) images.push(image);
    }
    return { output: { corpus_key: corpus, document_id: id, ...(row.title ? { title: row.title } : {}), metadata: row.metadata, parts, tables, images }, error: false };
  }
}

