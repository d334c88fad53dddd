import { readFileSync } from 'node:fs';
import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { load } from 'js-yaml';

const OAS = '/work/shared/reference/vectara/vectara-oas-v2.yaml';
const ID = 'vectara-oas-v2';

let ajv: Ajv | undefined;
let doc: { components: { schemas: Record<string, { discriminator?: { propertyName: string; mapping: Record<string, string> } }> } } | undefined;
const compiled = new Map<string, ValidateFunction>();

/**
 * A validator for a component schema of the reference OpenAPI file, `$ref`s resolved from the file itself (not
 * copied), so a response checked with it has the reference's shape. OpenAPI's own keywords (`example`,
 * `discriminator`, `x-…`) are not JSON Schema: ajv runs non-strict and ignores them; the numeric formats
 * OpenAPI adds (`int32`, `float`, …) are accepted as any number of that type.
 */
export function referenceSchema(name: string): ValidateFunction {
  if (!ajv) {
    ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    for (const f of ['int32', 'int64']) ajv.addFormat(f, { type: 'number', validate: (n: number) => Number.isInteger(n) });
    for (const f of ['float', 'double']) ajv.addFormat(f, { type: 'number', validate: () => true });
    doc = load(readFileSync(OAS, 'utf8')) as typeof doc;
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

/**
 * Checks one member of a discriminated union (a stream event) against the schema its discriminator maps it to:
 * the reference's unions are `oneOf`s whose members overlap (`ChatInfoResponse` requires nothing), so plain
 * `oneOf` would match several; OpenAPI picks the member by the discriminator, and so does this.
 */
export function expectReferenceMember(union: string, body: Record<string, unknown>): void {
  referenceSchema(union);
  const d = doc!.components.schemas[union].discriminator;
  if (!d) throw new Error(`${union} has no discriminator`);
  const ref = d.mapping[String(body[d.propertyName])];
  if (!ref) throw new Error(`${union} has no member for ${d.propertyName} = ${String(body[d.propertyName])}`);
  expectReferenceShape(ref.split('/').pop()!, body);
}
