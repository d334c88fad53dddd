import { readFileSync } from 'node:fs';
import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { load } from 'js-yaml';

/**
 * Validates response bodies against the reference OpenAPI document itself: schemas are reached through
 * `$ref`s into the loaded file, never copied. OpenAPI 3.0 keywords ajv does not know (`discriminator`,
 * `example`, `x-*`) are ignored (`strict: false`); `nullable` is ajv's own.
 */
const REFERENCE = '/work/shared/reference/vectara/vectara-oas-v2.yaml';
const ID = 'vectara-oas-v2';

type Operation = { operationId?: string; responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> };

let ajv: Ajv | undefined;
type Discriminated = { discriminator?: { propertyName: string; mapping?: Record<string, string> } };
let doc: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Discriminated> } } | undefined;
const compiled = new Map<string, ValidateFunction>();

function reference(): { ajv: Ajv; doc: NonNullable<typeof doc> } {
  if (!ajv || !doc) {
    doc = load(readFileSync(REFERENCE, 'utf8')) as NonNullable<typeof doc>;
    ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ ...(doc as object), $id: ID } as object);
  }
  return { ajv, doc };
}

function validator(key: string, ref: string): ValidateFunction {
  const { ajv: a } = reference();
  if (!compiled.has(key)) compiled.set(key, a.compile({ $ref: `${ID}${ref}` }));
  return compiled.get(key)!;
}

/** JSON-pointer of an operation's response schema: `#/paths/~1v2~1…/post/responses/201/content/application~1json/schema`. */
function responseRef(operationId: string, status: number): string {
  const { doc: d } = reference();
  const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
  for (const [path, item] of Object.entries(d.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (op?.operationId !== operationId) continue;
      const content = op.responses?.[String(status)]?.content ?? {};
      const type = Object.keys(content).find((t) => t.includes('json'));
      if (!type) throw new Error(`${operationId} has no JSON response for ${status}`);
      return `#/paths/${esc(path)}/${method}/responses/${status}/content/${esc(type)}/schema`;
    }
  }
  throw new Error(`No operation ${operationId} in the reference`);
}

/** The errors ajv finds in `body` as the response of `operationId` with `status`; empty when it conforms. */
export function referenceErrors(operationId: string, status: number, body: unknown): string[] {
  const validate = validator(`${operationId} ${status}`, responseRef(operationId, status));
  return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}

/** The errors for `value` against a component schema (`QueryStreamedResponse`, `GenerationInfo`…). */
export function schemaErrors(name: string, value: unknown): string[] {
  const validate = validator(name, `#/components/schemas/${name}`);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}

/**
 * The errors for one streamed event against the variant its discriminator names (`type` → `GenerationInfo`…):
 * the variants' `type` has only a default, so a plain `oneOf` matches several and fails.
 */
export function streamEventErrors(name: string, event: Record<string, unknown>): string[] {
  const { doc: d } = reference();
  const discriminator = d.components.schemas[name]?.discriminator;
  if (!discriminator?.mapping) throw new Error(`${name} has no discriminator mapping`);
  const ref = discriminator.mapping[String(event[discriminator.propertyName])];
  if (!ref) return [`${discriminator.propertyName} "${String(event[discriminator.propertyName])}" is not a variant of ${name}`];
  return schemaErrors(ref.replace('#/components/schemas/', ''), event);
}
