import { Compile, parse } from 'velocityjs';
import type { ResultFields } from '../query/query-corpora';
import type { ChatMessage } from '@lib/llms';
import { DomainError, invalid } from '@lib/platform';
import type { ResponseLanguage } from '../../domain/languages';
import type { ChatExchange } from '../../domain/chat';
import { parseMessages } from './prompt-messages';
import { callMethod, EscapeTool, PromptResult, TemplateMethodError, wrap } from './prompt-values';

type Asts = ReturnType<typeof parse>;
type VelocityAst = Parameters<Compile['getReferences']>[0];
type RefAst = { type: 'references'; id: string; path?: { type: string; id: unknown }[] } & Record<string, unknown>;

/** Limits on a caller's template: it runs in the service's process, so a hostile one must fail fast. */
export const MAX_TEMPLATE_LENGTH = 50_000;
const MAX_OUTPUT = 2_000_000;
const MAX_STEPS = 200_000;
const MAX_RENDER_MS = 2_000;
const MAX_RANGE = 1_000;
/** Elements a value built by `#set` may hold, nested ones counted (lists of lists grow exponentially). */
const MAX_SET_NODES = 100_000;

/** A used search result, as the template gets it. */
export type PromptResultInput = ResultFields;

export interface PromptInput {
  readonly query: string;
  readonly results: readonly PromptResultInput[];
  readonly language: ResponseLanguage;
  readonly maxResponseCharacters?: number;
  /** A chat's earlier enabled turns, oldest first (docs/chats.md). */
  readonly chatHistory?: readonly ChatExchange[];
}

export interface RenderedPrompt {
  readonly messages: ChatMessage[];
  /** The messages as sent, as JSON text (the response's `rendered_prompt`). */
  readonly text: string;
}

const IDX_WORDS = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth'];

class TemplateLimit extends Error {}


/**
 * velocityjs with budgets (steps, time, output size, values built by `#set`) and Apache Velocity's
 * `$foreach.first` / `$foreach.last`, which velocityjs lacks (it has `index`, `count`, `hasNext`).
 */
class GuardedCompile extends Compile {
  private steps = 0;
  private readonly deadline = performance.now() + MAX_RENDER_MS;

  constructor(asts: Asts) {
    super(asts, {
      customMethodHandlers: [{ uid: 'prompt-values', match: () => true, resolve: ({ context, property, params }) => callMethod(context, property, params) }],
      valueMapper: (value: unknown) => {
        if (nodeCount(value, MAX_SET_NODES) > MAX_SET_NODES) throw new TemplateLimit(`a value set with #set holds more than ${MAX_SET_NODES} elements`);
        return value;
      },
    });
  }

  override renderAstList(asts?: Asts, contextId?: string): string {
    if (++this.steps > MAX_STEPS) throw new TemplateLimit(`rendering took more than ${MAX_STEPS} steps`);
    if (performance.now() > this.deadline) throw new TemplateLimit(`rendering took more than ${MAX_RENDER_MS} ms`);
    const out = super.renderAstList(asts, contextId);
    if (out.length > MAX_OUTPUT) throw new TemplateLimit(`the output grew past ${MAX_OUTPUT} characters`);
    return out;
  }

  // velocityjs types this as returning a string; it returns the reference's value, of any type.
  override getReferences(ast: VelocityAst, isVal?: boolean): string {
    const ref = ast as unknown as RefAst;
    const flag = ref.type === 'references' && ref.id === 'foreach' && ref.path?.length === 1 && ref.path[0].type === 'property' ? ref.path[0].id : undefined;
    const loop = (key: string) => super.getReferences({ ...ref, path: [{ type: 'property', id: key }] } as VelocityAst, false) as unknown;
    if (flag === 'first') return (loop('index') === 0) as unknown as string;
    if (flag === 'last') return (loop('hasNext') === false) as unknown as string;
    return super.getReferences(ast, isVal);
  }
}

/**
 * A prompt template (Apache Velocity through velocityjs) with the reference's variables: `$vectaraQuery`,
 * `$vectaraQueryResults` (`getText()`, `docMetadata().get("k")`, `partMetadata()`, `present()`),
 * `$vectaraIdxWord`, `$vectaraLangCode`, `$vectaraLangName`, `$vectaraOutChars`, and `$esc`. It must render
 * to a JSON array of chat messages. Problems are 400s on `field`.
 */
export class PromptTemplate {
  private constructor(
    private readonly asts: Asts,
    private readonly field: string,
    /** Whether the template places `$vectaraChatHistory` itself; otherwise the history is inserted for it. */
    private readonly placesChatHistory: boolean,
  ) {}

  static compile(source: string, field: string): PromptTemplate {
    return new PromptTemplate(parseTemplate(source, field), field, source.includes('vectaraChatHistory'));
  }

  render(input: PromptInput): RenderedPrompt {
    const context = {
      vectaraQuery: wrap(input.query),
      vectaraQueryResults: input.results.map(
        (r) => new PromptResult(r),
      ),
      vectaraIdxWord: IDX_WORDS,
      vectaraLangCode: input.language.code,
      vectaraLangName: wrap(input.language.name),
      vectaraOutChars: input.maxResponseCharacters,
      vectaraChatHistory: (input.chatHistory ?? []).map((t) => ({ query: wrap(t.query), answer: wrap(t.answer) })),
      esc: new EscapeTool(),
    };
    const rendered = renderGuarded(this.asts, this.field, context);
    const parsed = parseMessages(rendered.trim());
    if ('problem' in parsed) throw templateError(this.field, `it must render to a JSON array of {"role", "content"} messages, but ${parsed.problem}`);
    const messages = this.placesChatHistory ? parsed.messages : withChatHistory(parsed.messages, input.chatHistory ?? []);
    return { messages, text: JSON.stringify(messages) };
  }
}

/**
 * A Velocity template rendered to text over a plain context (agent instructions and reminders), with the same
 * budgets as prompt templates. Problems are 400s on `field`.
 */
export class VelocityText {
  private constructor(
    private readonly asts: Asts,
    private readonly field: string,
  ) {}

  static compile(source: string, field: string): VelocityText {
    return new VelocityText(parseTemplate(source, field), field);
  }

  /** Renders with `context` (plain JSON values); a reference to something absent renders as written, as Velocity does. */
  render(context: Record<string, unknown>): string {
    return renderGuarded(this.asts, this.field, context);
  }
}

/**
 * A chat's earlier turns as user/assistant pairs after the leading system messages, so that every template
 * (the presets, and a caller's that does not place `$vectaraChatHistory`) carries the conversation and the roles
 * still alternate before the template's own question.
 */
function withChatHistory(messages: ChatMessage[], history: readonly ChatExchange[]): ChatMessage[] {
  if (!history.length) return messages;
  let at = 0;
  while (at < messages.length && messages[at].role === 'system') at++;
  const turns = history.flatMap((t): ChatMessage[] => [
    { role: 'user', content: t.query },
    { role: 'assistant', content: t.answer },
  ]);
  return [...messages.slice(0, at), ...turns, ...messages.slice(at)];
}

/** Renders within the budgets; a budget passed or a failing method is a 400 on `field`. */
function renderGuarded(asts: Asts, field: string, context: Record<string, unknown>): string {
  try {
    return new GuardedCompile(asts).render(context);
  } catch (e) {
    if (e instanceof TemplateLimit || e instanceof TemplateMethodError) throw templateError(field, `rendering stopped: ${e.message}`);
    // By name: a stack overflow inside a builtin may be raised as another realm's RangeError (seen under jest's vm
    // contexts), which `instanceof` does not recognise.
    if ((e as { name?: unknown } | undefined)?.name === 'RangeError') {
      throw templateError(field, `rendering stopped: ${(e as Error).message} (a recursive macro or a value that contains itself?)`);
    }
    throw templateError(field, `rendering failed: ${(e as Error).message}`);
  }
}

/** A caller's template parsed, within the length limit and with bounded ranges only; problems are 400s on `field`. */
function parseTemplate(source: string, field: string): Asts {
  if (source.length > MAX_TEMPLATE_LENGTH) throw templateError(field, `it is longer than ${MAX_TEMPLATE_LENGTH} characters`);
  let asts: Asts;
  try {
    asts = parse(source);
  } catch (e) {
    throw templateError(field, `it is not valid Velocity: ${(e as Error).message.replace(/\s+/g, ' ').trim()}`);
  }
  const range = unboundedRange(asts);
  if (range) throw templateError(field, range);
  return asts;
}

function templateError(field: string, reason: string): DomainError {
  return invalid('generation.bad_template', `Invalid ${field}: ${reason}`, { [field]: reason });
}

/** A range `[a..b]` whose ends are not integer literals, or that spans more than MAX_RANGE numbers. */
function unboundedRange(node: unknown): string | undefined {
  if (Array.isArray(node)) {
    for (const n of node) {
      const found = unboundedRange(n);
      if (found) return found;
    }
    return undefined;
  }
  if (node === null || typeof node !== 'object') return undefined;
  const n = node as { type?: unknown; isRange?: unknown; value?: unknown };
  if (n.type === 'array' && n.isRange === true && Array.isArray(n.value)) {
    const [from, to] = n.value.map((v) => (typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : NaN));
    if (Number.isNaN(from) || Number.isNaN(to)) return 'ranges [a..b] must have integer literals at both ends';
    if (Math.abs(to - from) >= MAX_RANGE) return `a range [a..b] may span at most ${MAX_RANGE} numbers`;
  }
  for (const v of Object.values(n)) {
    const found = unboundedRange(v);
    if (found) return found;
  }
  return undefined;
}

/** Elements in a value, nested ones included, counting no further than past `limit`. */
function nodeCount(value: unknown, limit: number): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (++count > limit) return count;
    const children = Array.isArray(v) ? v : v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype ? Object.values(v) : [];
    if (count + stack.length + children.length > limit) return limit + 1;
    stack.push(...children);
  }
  return count;
}
