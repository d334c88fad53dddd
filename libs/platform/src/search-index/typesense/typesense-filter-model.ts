/**
 * Test support, not used by the adapter: a model of Typesense's `filter_by` as far as the translations use it, with
 * the engine's behaviour on plain values that the typed layout exists to avoid: string fields compare their
 * normalised tokens (lower case, punctuation dropped), `:!=` also matches documents without the field (≥ 0.25),
 * ranges need a numeric field, `abc*` is a prefix. Numbers in int64 fields compare as BigInt (the adapter writes
 * order keys beyond 2^53). It lets unit tests check translations against matchesFilter and the fake server
 * answer searches as the real one would; the contract checks the real server when TYPESENSE_URL is set.
 */
export type FieldTypeOf = (field: string) => string | undefined;
type Pred = (doc: Record<string, unknown>) => boolean;

const normalise = (s: string): string => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();

export function typesenseFilterModel(filterBy: string, typeOf: FieldTypeOf): Pred {
  let at = 0;
  const peek = (s: string) => filterBy.startsWith(s, at);
  const take = (re: RegExp): string => {
    const m = re.exec(filterBy.slice(at));
    if (!m) throw new Error(`model cannot read ${filterBy.slice(at)}`);
    at += m[0].length;
    return m[0];
  };
  const literal = (): string | { prefix: string } => {
    if (peek('`')) return take(/^`[^`]*`/).slice(1, -1);
    const raw = take(/^[^\s,\])&|]+/);
    return raw.endsWith('*') ? { prefix: raw.slice(0, -1) } : raw;
  };
  const clause = (): Pred => {
    const name = take(/^[A-Za-z0-9_]+/);
    const op = take(/^:(!=|<=|>=|<|>|=)/).slice(1);
    const values: (string | { prefix: string })[] = [];
    if (peek('[')) {
      take(/^\[/);
      values.push(literal());
      while (peek(',')) {
        take(/^,/);
        values.push(literal());
      }
      take(/^\]/);
    } else values.push(literal());
    const type = typeOf(name) ?? 'string';
    const numeric = /^(int32|int64|float)$/.test(type);
    const num = (v: unknown): bigint | number => (type === 'float' ? Number(v) : BigInt(String(v)));
    const equal = (v: unknown, lit: string | { prefix: string }): boolean => {
      if (Array.isArray(v)) return v.some((e) => equal(e, lit));
      if (typeof lit === 'object') return typeof v === 'string' && normalise(v).startsWith(normalise(lit.prefix));
      if (type === 'bool') return String(v) === lit;
      if (numeric) return num(v) === num(lit);
      return typeof v === 'string' && (type === 'string[]' ? v === lit : normalise(v) === normalise(lit));
    };
    return (doc) => {
      const v = doc[name];
      if (op === '=') return v !== undefined && values.some((lit) => equal(v, lit));
      if (op === '!=') return v === undefined || !values.some((lit) => equal(v, lit));
      if (!numeric || v === undefined || typeof values[0] !== 'string') return false;
      const [a, b] = [num(v), num(values[0])];
      return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b;
    };
  };
  const primary = (): Pred => {
    if (!peek('(')) return clause();
    take(/^\(/);
    const inner = or();
    take(/^\)/);
    return inner;
  };
  const and = (): Pred => {
    const items = [primary()];
    while (peek(' && ')) {
      take(/^ && /);
      items.push(primary());
    }
    return (doc) => items.every((p) => p(doc));
  };
  const or = (): Pred => {
    const items = [and()];
    while (peek(' || ')) {
      take(/^ \|\| /);
      items.push(and());
    }
    return (doc) => items.some((p) => p(doc));
  };
  const result = or();
  if (at !== filterBy.length) throw new Error(`model stopped at ${filterBy.slice(at)}`);
  return result;
}

/** The type of a field under the typed layout's regex declarations (and the presence lists). */
export const typedLayoutType: FieldTypeOf = (field) =>
  field.endsWith('_has') ? 'string[]' : field.endsWith('__n') ? 'int64' : field.endsWith('__b') ? 'bool' : 'string';
