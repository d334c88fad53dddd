import { assertNever, conflict, DomainError, invalid, notFound } from '@lib/platform/kernel';

export type FilterAttributeType = 'integer' | 'real_number' | 'text' | 'boolean' | 'list[integer]' | 'list[real_number]' | 'list[text]';

export interface FilterAttribute {
  readonly name: string;
  readonly level: 'document' | 'part';
  readonly description?: string;
  readonly indexed: boolean;
  readonly type: FilterAttributeType;
}

export interface CorpusSettings {
  readonly name: string;
  readonly description: string;
  readonly enabled: boolean;
  readonly saveHistory: boolean;
  readonly queriesAreAnswers: boolean;
  readonly documentsAreQuestions: boolean;
  /**
   * The encoder the corpus was created with (resolved to the default when none was named); its parts are
   * embedded with it and its queries encoded with it, for the corpus's life. Absent on corpora created before
   * encoders were wired in: they are searched lexically only.
   */
  readonly encoderName?: string;
  /** Length of the encoder's vectors, for engines that fix it in the index schema. */
  readonly encoderDimensions?: number;
  readonly requestTimeout?: number;
  readonly requestTimeoutMillis?: number;
  readonly filterAttributes: readonly FilterAttribute[];
}

export type CorpusEvent =
  | { type: 'CorpusCreated'; data: { corpusKey: string; corpusId: string; settings: CorpusSettings; createdAt: string } }
  | { type: 'CorpusUpdated'; data: { corpusKey: string; corpusId: string; changes: Partial<Pick<CorpusSettings, 'name' | 'description' | 'enabled' | 'saveHistory'>>; updatedAt: string } }
  | { type: 'CorpusDeleted'; data: { corpusKey: string; corpusId: string; deletedAt: string } }
  /** Every document is dropped; document ids are free again in the new epoch (docs/corpora.md). */
  | { type: 'CorpusReset'; data: { corpusKey: string; corpusId: string; epoch: number; /** The corpus's vector length, so the emptied index keeps it. */ encoderDimensions?: number; resetAt: string } }
  | { type: 'CorpusFilterAttributesReplaced'; data: { corpusKey: string; corpusId: string; filterAttributes: readonly FilterAttribute[]; jobId: string; replacedAt: string } };

export const CORPUS_EVENT_TYPES = ['CorpusCreated', 'CorpusUpdated', 'CorpusDeleted', 'CorpusReset', 'CorpusFilterAttributesReplaced'] as const;

export type CorpusState =
  | { readonly status: 'absent' }
  | { readonly status: 'active'; readonly corpusId: string; readonly settings: CorpusSettings; readonly epoch: number }
  | { readonly status: 'deleted'; readonly corpusId: string };

export const initialCorpusState: CorpusState = { status: 'absent' };

export function evolveCorpus(state: CorpusState, event: CorpusEvent): CorpusState {
  switch (event.type) {
    case 'CorpusCreated':
      return { status: 'active', corpusId: event.data.corpusId, settings: event.data.settings, epoch: 0 };
    case 'CorpusUpdated':
      return state.status === 'active' ? { ...state, settings: { ...state.settings, ...event.data.changes } } : state;
    case 'CorpusDeleted':
      return { status: 'deleted', corpusId: event.data.corpusId };
    case 'CorpusReset':
      return state.status === 'active' ? { ...state, epoch: event.data.epoch } : state;
    case 'CorpusFilterAttributesReplaced':
      return state.status === 'active' ? { ...state, settings: { ...state.settings, filterAttributes: event.data.filterAttributes } } : state;
    default:
      return assertNever(event);
  }
}

export const corpusFold = { initialState: initialCorpusState, evolve: evolveCorpus };

export const corpusNotFound = (key: string): DomainError => notFound('corpus.not_found', `Corpus "${key}" does not exist`, key);

/** A deleted corpus's key may be used again: the new corpus gets a new id, so nothing of the old one leaks in. */
export function decideCreateCorpus(
  state: CorpusState,
  command: { corpusKey: string; settings: CorpusSettings },
  now: Date,
  newCorpusId: () => string,
): CorpusEvent[] {
  if (state.status === 'active') {
    // The spec makes a duplicate key a 400 (the reference API says 409); the spec wins.
    throw invalid('corpus.key_taken', `A corpus with key "${command.corpusKey}" already exists`, { key: 'corpus key already exists' });
  }
  validateFilterAttributes(command.settings.filterAttributes);
  return [{ type: 'CorpusCreated', data: { corpusKey: command.corpusKey, corpusId: newCorpusId(), settings: command.settings, createdAt: now.toISOString() } }];
}

/** Names are unique per level (`doc.x` and `part.x` are different attributes). */
export function validateFilterAttributes(attributes: readonly FilterAttribute[]): void {
  const names = new Set<string>();
  for (const attr of attributes) {
    const key = `${attr.level}:${attr.name}`;
    if (names.has(key)) throw invalid('corpus.duplicate_filter_attribute', `Filter attribute "${attr.name}" is declared twice`, { filter_attributes: `duplicate name "${attr.name}"` });
    names.add(key);
  }
}

export function decideResetCorpus(state: CorpusState, command: { corpusKey: string }, now: Date): CorpusEvent[] {
  if (state.status !== 'active') throw corpusNotFound(command.corpusKey);
  const dimensions = state.settings.encoderDimensions;
  return [{ type: 'CorpusReset', data: { corpusKey: command.corpusKey, corpusId: state.corpusId, epoch: state.epoch + 1, ...(dimensions ? { encoderDimensions: dimensions } : {}), resetAt: now.toISOString() } }];
}

export function decideReplaceFilterAttributes(
  state: CorpusState,
  command: { corpusKey: string; filterAttributes: readonly FilterAttribute[]; jobId: string },
  now: Date,
): CorpusEvent[] {
  if (state.status !== 'active') throw corpusNotFound(command.corpusKey);
  validateFilterAttributes(command.filterAttributes);
  return [
    {
      type: 'CorpusFilterAttributesReplaced',
      data: { corpusKey: command.corpusKey, corpusId: state.corpusId, filterAttributes: command.filterAttributes, jobId: command.jobId, replacedAt: now.toISOString() },
    },
  ];
}

export function decideUpdateCorpus(
  state: CorpusState,
  command: { corpusKey: string; changes: Partial<Pick<CorpusSettings, 'name' | 'description' | 'enabled' | 'saveHistory'>> },
  now: Date,
): CorpusEvent[] {
  if (state.status !== 'active') throw corpusNotFound(command.corpusKey);
  const changed = Object.fromEntries(
    Object.entries(command.changes).filter(([k, v]) => v !== undefined && state.settings[k as keyof CorpusSettings] !== v),
  );
  if (Object.keys(changed).length === 0) return [];
  return [{ type: 'CorpusUpdated', data: { corpusKey: command.corpusKey, corpusId: state.corpusId, changes: changed, updatedAt: now.toISOString() } }];
}

export function decideDeleteCorpus(state: CorpusState, command: { corpusKey: string }, now: Date): CorpusEvent[] {
  if (state.status !== 'active') throw corpusNotFound(command.corpusKey);
  return [{ type: 'CorpusDeleted', data: { corpusKey: command.corpusKey, corpusId: state.corpusId, deletedAt: now.toISOString() } }];
}

/**
 * What a corpus holds at one time: its id, and the epoch after resets (docs/corpora.md). Document streams are named
 * by it, so a document event says which incarnation it was decided against; projections apply it only to that one.
 */
export const corpusIncarnation = (corpusId: string, epoch = 0): string => (epoch === 0 ? corpusId : `${corpusId}~${epoch}`);

/** The incarnation a document stream (`document-<incarnation>.<documentId>`) belongs to. */
export function documentIncarnation(streamId: string): string {
  const name = streamId.slice('document-'.length);
  return decodeURIComponent(name.slice(0, name.indexOf('.')));
}

/** Guard used by document commands: the corpus must exist and be enabled for writes. */
export function requireActiveCorpus(state: CorpusState, corpusKey: string): Extract<CorpusState, { status: 'active' }> {
  if (state.status !== 'active') throw corpusNotFound(corpusKey);
  if (!state.settings.enabled) throw conflict('corpus.disabled', `Corpus "${corpusKey}" is disabled`);
  return state;
}
