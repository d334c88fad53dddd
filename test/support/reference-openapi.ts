import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { load } from 'js-yaml';
import { isDeviation } from './reference-deviations';

/**
 * The reference API's OpenAPI document, read from the shared file (never copied), and a validator of a response
 * against the schema the reference gives for an operation and status. Schemas keep their `$ref`s: the whole
 * `components.schemas` is registered with ajv under the document's own `#/components/schemas/<name>` addresses.
 */
const CANDIDATES = [
  process.env.REFERENCE_OAS,
  join(__dirname, '..', '..', '..', 'shared', 'reference', 'vectara', 'vectara-oas-v2.yaml'),
  '/work/shared/reference/vectara/vectara-oas-v2.yaml',
].filter((p): p is string => !!p);

/** Where the reference OpenAPI file is (`REFERENCE_OAS`, else the shared folder beside the clone); undefined if nowhere. */
export const REFERENCE_OAS_PATH: string | undefined = CANDIDATES.find((p) => existsSync(p));

/** `describe`, or `describe.skip` with the reason printed when the reference file is not on this machine. */
export const describeWithReference: jest.Describe = REFERENCE_OAS_PATH
  ? describe
  : (((name: string) => {
      process.stdout.write(`skipped: ${name}: the reference OpenAPI is not at ${CANDIDATES.join(' or ')} (set REFERENCE_OAS)\n`);
      return describe.skip(name, () => undefined);
    }) as unknown as jest.Describe);

type Operation = { operationId?: string; tags?: string[]; requestBody?: { content?: Record<string, { schema?: unknown }> }; responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> };
type SchemaNode = { $ref?: string; example?: unknown; default?: unknown; allOf?: SchemaNode[]; properties?: Record<string, SchemaNode>; required?: string[] };
type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };

export interface ReferenceOperation {
  readonly operationId: string;
  readonly method: string;
  readonly path: string;
  /** Statuses the reference lists for the operation (`default` excluded). */
  readonly statuses: string[];
}

export interface Mismatch {
  readonly operationId: string;
  readonly status: number;
  readonly errors: string[];
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const DOC_ID = 'vectara-oas-v2';

export class ReferenceOpenApi {
  private readonly doc: Document;
  private readonly ajv: Ajv;
  private readonly compiled = new Map<string, ValidateFunction | null>();

  constructor(path = REFERENCE_OAS_PATH) {
    if (!path) throw new Error('the reference OpenAPI file is not on this machine (set REFERENCE_OAS)');
    this.doc = load(readFileSync(path, 'utf8')) as Document;
    // Patterns are ECMAScript without the `u` flag (the reference escapes `=` and `-` in classes, which `u` refuses).
    // OpenAPI 3.0: `nullable` is understood by ajv natively; `example`, `x-…` and the OAS formats without a JSON
    // Schema meaning (`int`, `float`, `sse`, …) are annotations. strict:false lets those through as annotations.
    this.ajv = new Ajv({ strict: false, allErrors: true, discriminator: false, validateFormats: true, unicodeRegExp: false });
    addFormats(this.ajv);
    for (const f of ['int', 'int32', 'int64', 'float', 'double', 'markdown', 'sse', 'binary', 'byte']) this.ajv.addFormat(f, true);
    this.ajv.addSchema({ $id: DOC_ID, components: rebase(this.doc.components) }, DOC_ID);
  }

  operations(): ReferenceOperation[] {
    const out: ReferenceOperation[] = [];
    for (const [path, ops] of Object.entries(this.doc.paths)) {
      for (const method of METHODS) {
        const op = ops[method];
        if (!op?.operationId) continue;
        out.push({ operationId: op.operationId, method: method.toUpperCase(), path, statuses: Object.keys(op.responses ?? {}).filter((s) => s !== 'default') });
      }
    }
    return out;
  }

  operation(operationId: string): ReferenceOperation {
    const op = this.operations().find((o) => o.operationId === operationId);
    if (!op) throw new Error(`the reference has no operation ${operationId}`);
    return op;
  }

  /** The reference's first tag of an operation (its area: `Corpora`, `Chats`, …). */
  tagOf(operationId: string): string {
    const op = this.operation(operationId);
    return this.doc.paths[op.path][op.method.toLowerCase()].tags?.[0] ?? '';
  }

  /**
   * Errors of `body` against the reference's JSON schema for the operation's response with `status`: a status the
   * reference does not list for the operation is itself a mismatch; a listed status without a JSON body must have
   * none.
   */
  check(operationId: string, status: number, body: unknown): string[] {
    const op = this.operation(operationId);
    const response = this.doc.paths[op.path][op.method.toLowerCase()].responses?.[String(status)];
    if (!response) {
      // A status the spec or a standard requires where the reference lists none: the body is still the reference's Error.
      if (status >= 400 && deviation(operationId, status)) return this.errorsOf(`Error`, { $ref: '#/components/schemas/Error' }, body, ['messages', 'request_id']);
      return [`status ${status} is not listed by the reference (it lists ${op.statuses.join(', ')})`];
    }
    const json = response.content?.['application/json'];
    if (!json?.schema) return body === undefined || body === '' ? [] : [`the reference gives no JSON body for ${status}, got ${JSON.stringify(body).slice(0, 80)}`];
    return this.errorsOf(`${operationId} ${status}`, json.schema, body);
  }

  /**
   * Errors of a request `body` against the reference's JSON request schema for the operation (so a walk's requests
   * are ones a reference client could send); an operation without a JSON request body takes none.
   */
  requestErrors(operationId: string, body: unknown): string[] {
    const op = this.operation(operationId);
    const schema = this.doc.paths[op.path][op.method.toLowerCase()].requestBody?.content?.['application/json']?.schema;
    if (!schema) return body === undefined ? [] : [`the reference takes no JSON body for ${operationId}`];
    return this.errorsOf(`${operationId} request`, schema, body);
  }

  /**
   * A request value built from a component schema's own examples: its required properties (through `allOf`), each
   * the property's `example`, else its `default`, else built the same way from the schema it refers to. Properties
   * the reference gives no example for (secrets are `writeOnly` without one) are left out: the caller adds them.
   */
  exampleOf(name: string): Record<string, unknown> {
    const schema = this.doc.components.schemas[name] as SchemaNode | undefined;
    if (!schema) throw new Error(`the reference has no schema ${name}`);
    return this.exampleValue(schema, 0) as Record<string, unknown>;
  }

  private exampleValue(schema: SchemaNode, depth: number): unknown {
    if (schema.$ref) return depth > 4 ? undefined : this.exampleValue(this.doc.components.schemas[schema.$ref.split('/').pop()!] as SchemaNode, depth + 1);
    if (schema.example !== undefined) return schema.example;
    if (schema.default !== undefined) return schema.default;
    const parts = [...(schema.allOf ?? []), schema];
    const properties = Object.assign({}, ...parts.map((p) => (p.$ref ? this.flatten(p) : p).properties ?? {})) as Record<string, SchemaNode>;
    const required = parts.flatMap((p) => (p.$ref ? this.flatten(p) : p).required ?? []);
    if (!required.length) return undefined;
    const out: Record<string, unknown> = {};
    for (const key of required) {
      const value = properties[key] ? this.exampleValue(properties[key], depth + 1) : undefined;
      if (value !== undefined) out[key] = value;
    }
    return out;
  }

  /** A schema with its `allOf` parts' properties and required lists merged in. */
  private flatten(schema: SchemaNode): SchemaNode {
    const target = schema.$ref ? (this.doc.components.schemas[schema.$ref.split('/').pop()!] as SchemaNode) : schema;
    const parts = (target.allOf ?? []).map((p) => this.flatten(p));
    return { properties: Object.assign({}, ...parts.map((p) => p.properties ?? {}), target.properties ?? {}), required: [...parts.flatMap((p) => p.required ?? []), ...(target.required ?? [])] };
  }

  /**
   * Errors of each server-sent event of a streamed answer against the reference's `text/event-stream` schema for
   * the operation (each event's `data` is one JSON value; `[DONE]`, the chat-completion terminator, is not JSON).
   */
  checkStream(operationId: string, status: number, sse: string): string[] {
    const op = this.operation(operationId);
    const schema = this.doc.paths[op.path][op.method.toLowerCase()].responses?.[String(status)]?.content?.['text/event-stream']?.schema;
    if (!schema) return [`the reference gives no event stream for ${operationId} ${status}`];
    const datas = sse
      .split(/\r?\n\r?\n/)
      .map((block) => block.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n'))
      .filter((d) => d && d !== '[DONE]');
    if (!datas.length) return ['the stream carried no events'];
    return datas.flatMap((d, i) => {
      let value: unknown;
      try {
        value = JSON.parse(d);
      } catch {
        return [`event ${i} is not JSON: ${d.slice(0, 60)}`];
      }
      return this.errorsOf(`${operationId} ${status} stream`, schema, value).map((e) => `event ${i} (${(value as { type?: string }).type ?? ''}): ${e}`);
    });
  }

  /** Errors of `body` against a component schema of the reference (`Chat`, `NotFoundError`, …). */
  schemaErrors(name: string, body: unknown): string[] {
    if (!this.doc.components.schemas[name]) throw new Error(`the reference has no schema ${name}`);
    return this.errorsOf(`schema ${name}`, { $ref: `#/components/schemas/${name}` }, body);
  }

  private errorsOf(key: string, schema: unknown, body: unknown, required: string[] = []): string[] {
    const validate = this.validator(key, schema);
    const absent = required.filter((f) => !body || typeof body !== 'object' || !(f in body)).map((f) => `/ must have required property '${f}'`);
    if (validate(body)) return absent;
    // `if` failures only say which `then` failed; the `then` errors themselves are reported.
    const errors = (validate.errors ?? []).filter((e) => e.keyword !== 'if');
    return [...absent, ...errors.map((e) => `${e.instancePath || '/'} ${e.message}${e.params && 'allowedValues' in e.params ? ` ${JSON.stringify(e.params.allowedValues)}` : ''}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`)];
  }

  private validator(key: string, schema: unknown): ValidateFunction {
    let v = this.compiled.get(key);
    if (!v) {
      v = this.ajv.compile(rebase(schema) as object);
      this.compiled.set(key, v);
    }
    return v;
  }
}

/** Statuses the service answers on purpose where the reference lists none: the one list, reference-deviations.ts. */
const deviation = isDeviation;

/**
 * `#/components/…` inside an operation's schema points into the registered document. A `oneOf` with a
 * `discriminator` mapping (ajv does not take `mapping`) becomes one `if type = k then <mapped schema>` per key, so a
 * value is checked against the schema its discriminator names, not against every alternative that happens to fit.
 */
function rebase(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rebase);
  if (!schema || typeof schema !== 'object') return schema;
  const obj = schema as Record<string, unknown>;
  const disc = obj.discriminator as { propertyName: string; mapping?: Record<string, string> } | undefined;
  if (disc?.mapping && Array.isArray(obj.oneOf)) {
    const { oneOf: _alternatives, discriminator: _d, ...rest } = obj;
    const prop = disc.propertyName;
    return rebase({
      ...rest,
      type: 'object',
      required: [prop],
      properties: { [prop]: { enum: Object.keys(disc.mapping) } },
      allOf: Object.entries(disc.mapping).map(([k, ref]) => ({ if: { properties: { [prop]: { const: k } }, required: [prop] }, then: { $ref: ref } })),
    });
  }
  // `nullable` beside `allOf`/`$ref` and no `type` (the reference's `watermark`, `verification`): ajv refuses it, so
  // it is said the JSON Schema way.
  if (obj.nullable === true && obj.type === undefined) {
    const { nullable: _n, ...rest } = obj;
    return { anyOf: [rebase(rest), { type: 'null' }] };
  }
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `${DOC_ID}${v}` : rebase(v)]));
}

let shared: ReferenceOpenApi | undefined;
/** One checker for every test file of a worker; undefined where the reference file is absent (checks then pass). */
const checker = (): ReferenceOpenApi | undefined => (REFERENCE_OAS_PATH ? (shared ??= new ReferenceOpenApi()) : undefined);

/** The errors in `body` as the response of `operationId` with `status`; empty when it conforms. */
export const referenceErrors = (operationId: string, status: number, body: unknown): string[] => checker()?.check(operationId, status, body) ?? [];

/** The errors for `value` against a component schema (`QueryStreamedResponse` picks the variant its `type` names). */
export const schemaErrors = (name: string, value: unknown): string[] => checker()?.schemaErrors(name, value) ?? [];

/**
 * Fails with the schema errors when `body` is not a valid `name` of the reference. Without the reference file on
 * the machine the shape is not checked (the conformance walker says so when it skips).
 */
export function expectReferenceShape(name: string, body: unknown): void {
  const errors = schemaErrors(name, body);
  if (errors.length) throw new Error(`response is not a valid ${name}: ${errors.join('; ')}\n${JSON.stringify(body).slice(0, 2000)}`);
}
