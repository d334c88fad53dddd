import type { Actor } from '@lib/platform/kernel';

/**
 * Memory blocks (issue 46, docs/agents.md "Memory"): named texts in the prompt of every turn, which the agent edits
 * with `memory_replace`/`memory_append` and operators with the API. A block's value is the fold of its changes
 * (`MemoryChange`, one event each); revision 0 is the configured `initial_value`, each change one more.
 */
export type MemoryScope = 'agent' | 'end_user' | 'session';

/** A block as configured (`memory.blocks[i]`); stored as given, defaults filled by `memoryBlocks`. */
export interface MemoryBlockConfig {
  readonly key: string;
  readonly scope: MemoryScope;
  readonly description?: string;
  readonly limit_chars?: number;
  readonly read_only?: boolean;
  readonly initial_value?: string;
}

export interface MemoryConfig {
  readonly blocks: readonly MemoryBlockConfig[];
}

export type MemoryBlock = Required<MemoryBlockConfig>;

export const MEMORY_LIMITS = { blocks: 20, limit_chars: 20_000, default_limit_chars: 2000, description: 1000 } as const;
export const MEMORY_KEY = /^[a-z0-9_-]{1,64}$/;
export const MEMORY_SCOPES: readonly MemoryScope[] = ['agent', 'end_user', 'session'];
export const MEMORY_REPLACE_TOOL = 'memory_replace';
export const MEMORY_APPEND_TOOL = 'memory_append';
export const MEMORY_TOOLS: readonly string[] = [MEMORY_REPLACE_TOOL, MEMORY_APPEND_TOOL];

/** Who made a change: an API caller, or the tool call of a session's turn (its `tool_input` event). */
export type MemoryAuthor = { readonly actor: Actor } | { readonly session_key: string; readonly turn_id: string; readonly event_id: string };

export type MemoryOperation = 'put' | 'replace' | 'append' | 'revert';

/** One change of a block: the value after it, in full (a block is at most 20,000 characters). */
export interface MemoryChange {
  readonly block: string;
  readonly revision: number;
  readonly operation: MemoryOperation;
  readonly value: string;
  /** The revision a revert restored. */
  readonly revertedTo?: number;
  readonly by: MemoryAuthor;
  readonly changedAt: string;
}

/** A block's current state: its value and revision (0: never changed, the initial value). */
export interface BlockState {
  readonly value: string;
  readonly revision: number;
  readonly last?: MemoryChange;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const FIELDS = new Set(['key', 'scope', 'description', 'limit_chars', 'read_only', 'initial_value']);

/** The configured blocks with their defaults (limit 2,000 characters, writable, empty). */
export function memoryBlocks(memory: MemoryConfig | undefined): MemoryBlock[] {
  return (memory?.blocks ?? []).map((b) => ({ key: b.key, scope: b.scope, description: b.description ?? '', limit_chars: b.limit_chars ?? MEMORY_LIMITS.default_limit_chars, read_only: b.read_only ?? false, initial_value: b.initial_value ?? '' }));
}

/** The blocks a session sees: the agent's, its end user's (only when it has one), its own. */
export function blocksInScope(memory: MemoryConfig | undefined, hasEndUser: boolean): MemoryBlock[] {
  return memoryBlocks(memory).filter((b) => b.scope !== 'end_user' || hasEndUser);
}

/** What is wrong with an agent's `memory`, by field (empty when nothing is). */
export function memoryProblems(memory: unknown, toolNames: readonly string[]): Record<string, string> {
  if (memory === undefined) return {};
  if (!isObject(memory)) return { memory: 'must be an object: {"blocks": [...]}' };
  const unknown = Object.keys(memory).find((k) => k !== 'blocks');
  if (unknown) return { [`memory.${unknown}`]: 'is not a field of memory (blocks)' };
  if (!Array.isArray(memory.blocks)) return { 'memory.blocks': 'must be an array of blocks' };
  const problems: Record<string, string> = {};
  if (memory.blocks.length > MEMORY_LIMITS.blocks) problems['memory.blocks'] = `at most ${MEMORY_LIMITS.blocks} blocks`;
  const seen = new Set<string>();
  memory.blocks.forEach((block: unknown, i) => {
    const at = `memory.blocks[${i}]`;
    if (!isObject(block)) return void (problems[at] = 'must be a block object: {key, scope, description?, limit_chars?, read_only?, initial_value?}');
    const extra = Object.keys(block).find((k) => !FIELDS.has(k));
    if (extra) problems[`${at}.${extra}`] = 'is not a field of a memory block (key, scope, description, limit_chars, read_only, initial_value)';
    if (typeof block.key !== 'string' || !MEMORY_KEY.test(block.key)) problems[`${at}.key`] = 'a block key is 1 to 64 lower-case letters, digits, underscores or hyphens';
    else if (seen.has(block.key)) problems[`${at}.key`] = `${block.key} is the key of an earlier block: keys are unique`;
    else seen.add(block.key);
    if (!MEMORY_SCOPES.includes(block.scope as MemoryScope)) problems[`${at}.scope`] = 'must be agent, end_user or session';
    if (block.description !== undefined && (typeof block.description !== 'string' || block.description.length > MEMORY_LIMITS.description)) problems[`${at}.description`] = `must be a string of at most ${MEMORY_LIMITS.description} characters`;
    const limit = block.limit_chars ?? MEMORY_LIMITS.default_limit_chars;
    if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > MEMORY_LIMITS.limit_chars) problems[`${at}.limit_chars`] = `must be an integer from 1 to ${MEMORY_LIMITS.limit_chars}`;
    if (block.read_only !== undefined && typeof block.read_only !== 'boolean') problems[`${at}.read_only`] = 'must be a boolean';
    if (block.initial_value !== undefined) {
      if (typeof block.initial_value !== 'string') problems[`${at}.initial_value`] = 'must be a string';
      else if (Number.isInteger(limit) && block.initial_value.length > (limit as number)) problems[`${at}.initial_value`] = `is ${block.initial_value.length} characters, over the block's limit_chars (${String(limit)})`;
    }
  });
  if (memory.blocks.length) {
    for (const name of MEMORY_TOOLS) if (toolNames.includes(name)) problems[`tool_configurations.${name}`] = `${name} is the built-in tool that edits memory blocks: name this tool configuration otherwise`;
  }
  return problems;
}

/** A block's state from its changes, oldest first. */
export function blockState(block: MemoryBlock, changes: readonly MemoryChange[]): BlockState {
  const last = changes.at(-1);
  return last ? { value: last.value, revision: last.revision, last } : { value: block.initial_value, revision: 0 };
}

/** The value a block held at a revision (0: its initial value), or undefined when it has no such revision. */
export function valueAt(block: MemoryBlock, changes: readonly MemoryChange[], revision: number): string | undefined {
  if (revision === 0) return block.initial_value;
  return changes.find((c) => c.revision === revision)?.value;
}

/** An edit asked for: by the API (`put`, `revert`) or by the agent's tools (`replace`, `append`). */
export type MemoryEdit =
  | { readonly operation: 'put'; readonly value: string }
  | { readonly operation: 'replace'; readonly old_text: string; readonly new_text: string }
  | { readonly operation: 'append'; readonly text: string }
  | { readonly operation: 'revert'; readonly revision: number };

/** Why an edit is refused, with the field it is about (the API turns it into a 400, a tool into an error the model reads). */
export interface MemoryRefusal {
  readonly field: string;
  readonly message: string;
}

/**
 * Decides one edit of a block: the change to store, nothing when the value would not change, or a refusal.
 * `byTool` edits may not touch a read-only block (operators may).
 */
export function decideMemoryEdit(
  block: MemoryBlock,
  changes: readonly MemoryChange[],
  edit: MemoryEdit,
  by: MemoryAuthor,
  now: Date,
  byTool: boolean,
): { change?: MemoryChange; refusal?: MemoryRefusal } {
  if (byTool && block.read_only) return { refusal: { field: 'block', message: `memory block ${block.key} is read-only` } };
  const state = blockState(block, changes);
  let value: string;
  switch (edit.operation) {
    case 'put':
      value = edit.value;
      break;
    case 'append':
      if (!edit.text) return { refusal: { field: 'text', message: 'text must not be empty' } };
      value = state.value ? `${state.value}\n${edit.text}` : edit.text;
      break;
    case 'replace': {
      if (!edit.old_text) return { refusal: { field: 'old_text', message: 'old_text must not be empty' } };
      const first = state.value.indexOf(edit.old_text);
      if (first < 0) return { refusal: { field: 'old_text', message: `old_text is not in memory block ${block.key}` } };
      if (state.value.indexOf(edit.old_text, first + 1) >= 0) return { refusal: { field: 'old_text', message: `old_text occurs more than once in memory block ${block.key}: give more of the text around it` } };
      value = state.value.slice(0, first) + edit.new_text + state.value.slice(first + edit.old_text.length);
      break;
    }
    case 'revert': {
      const at = valueAt(block, changes, edit.revision);
      if (at === undefined) return { refusal: { field: 'revision', message: `memory block ${block.key} has no revision ${edit.revision} (its revisions are 0 to ${state.revision})` } };
      value = at;
      break;
    }
    default: {
      const _exhaustive: never = edit;
      return _exhaustive;
    }
  }
  if (value.length > block.limit_chars) return { refusal: { field: edit.operation === 'put' ? 'value' : edit.operation === 'revert' ? 'revision' : edit.operation === 'append' ? 'text' : 'new_text', message: `memory block ${block.key} would hold ${value.length} characters, over its limit of ${block.limit_chars}` } };
  if (value === state.value) return {};
  return { change: { block: block.key, revision: state.revision + 1, operation: edit.operation, value, ...(edit.operation === 'revert' ? { revertedTo: edit.revision } : {}), by, changedAt: now.toISOString() } };
}

/** Whether a change was made by a session's tool call. */
export const bySession = (c: MemoryChange, sessionKey: string): boolean => 'session_key' in c.by && c.by.session_key === sessionKey;

/**
 * Undoing what one session taught a block: back to the value before its first change, as one `revert`. Refused
 * (`conflict`) when someone else changed the block after the session did, unless `force`; nothing when the session
 * never changed the block or the value is already back.
 */
export function decideSessionRevert(
  block: MemoryBlock,
  changes: readonly MemoryChange[],
  sessionKey: string,
  by: MemoryAuthor,
  now: Date,
  force: boolean,
): { change?: MemoryChange; conflict?: MemoryChange[] } {
  const first = changes.findIndex((c) => bySession(c, sessionKey));
  if (first < 0) return {};
  const target = changes[first].revision - 1;
  // Already back where the session found it (reverted before): nothing to undo, and nothing to refuse.
  if (blockState(block, changes).value === valueAt(block, changes, target)) return {};
  const lastOwn = changes.map((c) => bySession(c, sessionKey)).lastIndexOf(true);
  const later = changes.slice(lastOwn + 1).filter((c) => !bySession(c, sessionKey));
  if (later.length && !force) return { conflict: later };
  const { change } = decideMemoryEdit(block, changes, { operation: 'revert', revision: target }, by, now, false);
  return change ? { change } : {};
}

/** A change as the API shows it. */
export function memoryChangeView(c: MemoryChange): Record<string, unknown> {
  return { revision: c.revision, operation: c.operation, value: c.value, ...(c.revertedTo !== undefined ? { reverted_to: c.revertedTo } : {}), changed_at: c.changedAt, changed_by: 'actor' in c.by ? { actor: { type: c.by.actor.type, id: c.by.actor.id } } : c.by };
}

/** A block as the API shows it. */
export function memoryBlockView(block: MemoryBlock, state: BlockState, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    key: block.key,
    scope: block.scope,
    description: block.description,
    value: state.value,
    chars: state.value.length,
    limit_chars: block.limit_chars,
    read_only: block.read_only,
    revision: state.revision,
    ...extra,
    ...(state.last ? { updated_at: state.last.changedAt, updated_by: memoryChangeView(state.last).changed_by } : {}),
  };
}

/** The system message's part that shows the blocks in scope, after the step's instructions. */
export function memoryPrompt(blocks: readonly { block: MemoryBlock; value: string }[]): string {
  if (!blocks.length) return '';
  const writable = blocks.some((b) => !b.block.read_only);
  const parts = blocks.map(({ block, value }) => `<memory_block key="${block.key}" scope="${block.scope}" chars="${value.length}/${block.limit_chars}"${block.read_only ? ' read_only="true"' : ''}>\n${block.description ? `<description>${block.description}</description>\n` : ''}<value>\n${value}\n</value>\n</memory_block>`);
  return `Your memory: blocks that persist beyond this conversation${writable ? `; edit the writable ones with ${MEMORY_REPLACE_TOOL} or ${MEMORY_APPEND_TOOL}, within their limits` : ''}.\n${parts.join('\n')}`;
}

/** The `memory_replace` and `memory_append` tools as the model sees them, `block` limited to the writable blocks. */
export function memoryToolDefinitions(writable: readonly string[]) {
  if (!writable.length) return [];
  const block = { type: 'string', enum: [...writable], description: 'The key of the memory block' };
  return [
    {
      type: 'function' as const,
      function: {
        name: MEMORY_REPLACE_TOOL,
        description: 'Replaces a piece of text in a memory block: old_text must occur exactly once in the block.',
        parameters: { type: 'object', properties: { block, old_text: { type: 'string', description: 'The exact text to replace' }, new_text: { type: 'string', description: 'The text to put in its place (empty deletes it)' } }, required: ['block', 'old_text', 'new_text'], additionalProperties: false },
      },
    },
    {
      type: 'function' as const,
      function: {
        name: MEMORY_APPEND_TOOL,
        description: 'Appends text to a memory block, on a new line.',
        parameters: { type: 'object', properties: { block, text: { type: 'string', description: 'The text to append' } }, required: ['block', 'text'], additionalProperties: false },
      },
    },
  ];
}

/** A tool call's arguments as an edit, or the refusal the model reads. */
export function toolEdit(name: string, args: Record<string, unknown>): { block: string; edit?: MemoryEdit; refusal?: string } {
  const block = typeof args.block === 'string' ? args.block : '';
  if (!block) return { block, refusal: 'block must name a memory block' };
  if (name === MEMORY_APPEND_TOOL) return typeof args.text === 'string' ? { block, edit: { operation: 'append', text: args.text } } : { block, refusal: 'text must be a string' };
  if (typeof args.old_text !== 'string' || typeof args.new_text !== 'string') return { block, refusal: 'old_text and new_text must be strings' };
  return { block, edit: { operation: 'replace', old_text: args.old_text, new_text: args.new_text } };
}
