import { readFileSync } from 'node:fs';
import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { load } from 'js-yaml';

const OAS = '/work/shared/reference/vectara/vectara-oas-v2.yaml';
const ID = 'vectara-oas-v2';

type Schema = { discriminator?: { propertyName: string; mapping?: Record<string, string> }; oneOf?: unknown[] } & Record<string, unknown>;

let ajv: Ajv | undefined;
const compiled = new Map<string, ValidateFunction>();

/**
 * OpenAPI picks a `oneOf` member by its discriminator; plain JSON Schema tries them all, and the reference's
 * members overlap (`ChatInfoResponse`, `RephraseSpan` require nothing), so a valid event would match several.
 * Each mapped member is therefore checked only when the discriminator holds its mapping key, which is what the
 * discriminator means. The members themselves stay `$ref`s into the file.
 */
function withDiscriminators(doc: { components: { schemas: Record<string, Schema> } }): void {
  for (const schema of Object.values(doc.components.schemas)) {
    const d = schema.discriminator;
    if (!d?.mapping || !schema.oneOf) continue;
    schema.oneOf = Object.entries(d.mapping).map(([key, ref]) => ({
      allOf: [{ $ref: `${ID}${ref}` }, { type: 'object', required: [d.propertyName], properties: { [d.propertyName]: { const: key } } }],
    }));
  }
}

/**
 * A validator for a component schema of the reference OpenAPI file, `$ref`s resolved from the file itself (not
 * copied), so a response checked with it has the reference's shape. OpenAPI's own keywords (`example`,
 * `x-…`) are not JSON Schema: ajv runs non-strict and ignores them; the numeric formats OpenAPI adds (`int32`,
 * `float`, …) are accepted as numbers of that kind.
 */
export function referenceSchema(name: string): ValidateFunction {
  if (!ajv) {
    // unicodeRegExp off: the reference has patterns (`[a-zA-Z0-9_\=\-]+$`) that are invalid in unicode mode.
    ajv = new Ajv({ strict: false, allErrors: true, unicodeRegExp: false });
    addFormats(ajv);
    for (const f of ['int32', 'int64']) ajv.addFormat(f, { type: 'number', validate: (n: number) => Number.isInteger(n) });
    for (const f of ['float', 'double']) ajv.addFormat(f, { type: 'number', validate: () => true });
    const doc = load(readFileSync(OAS, 'utf8')) as { components: { schemas: Record<string, Schema> } };
    withDiscriminators(doc);
    ajv.addSchema(doc as object, ID);
  }
  let v = compiled.get(name);
  if (!v) {
    v = ajv.getSchema(`${ID}#/components/schemas/${name}`);
    if (!v) throw new Error(`no schema ${name} in ${OAS}`);
    compiled.set(name, v);
  }
  return v;
}

/** Fails with ajv's errors when `body` is not a valid `name` of the reference. */
export function expectReferenceShape(name: string, body: unknown): void {
  const v = referenceSchema(name);
  if (!v(body)) throw new Error(`response is not a valid ${name}: ${JSON.stringify(v.errors, null, 1)}\n${JSON.stringify(body).slice(0, 2000)}`);
}
