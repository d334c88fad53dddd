import { readFileSync } from 'node:fs';
import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { load } from 'js-yaml';

const OAS = '/work/shared/reference/vectara/vectara-oas-v2.yaml';
const ID = 'vectara-oas-v2';

let ajv: Ajv | undefined;
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
    ajv.addSchema(load(readFileSync(OAS, 'utf8')) as object, ID);
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
