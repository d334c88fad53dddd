import { invalid } from '@lib/platform';

/** Bounds on the shape of a parsed JSON body, checked before anything else walks it (docs/security.md). */
export interface JsonShapeLimits {
  /** Nesting of objects and arrays; the stores hold less than 100 (MongoDB) and SQLite's JSON functions 1000. */
  readonly maxDepth: number;
  readonly maxKeysPerObject: number;
  readonly maxArrayLength: number;
  /** Every value (object, array, scalar) counted once. */
  readonly maxValues: number;
}

export const JSON_SHAPE_LIMITS: JsonShapeLimits = { maxDepth: 32, maxKeysPerObject: 1_000, maxArrayLength: 100_000, maxValues: 2_000_000 };

/**
 * Refuses a JSON value whose shape exceeds the limits, or that holds a `__proto__` key (JSON.parse keeps it
 * as an own property; the first `Object.assign` or copy loop would turn it into a prototype). One iterative
 * pass, linear in the size of the value and without recursion, so the check itself cannot be made slow or
 * overflow the stack. `field` names the part of the request the value came from, for the field error.
 */
export function checkJsonShape(value: unknown, field = 'body', limits: JsonShapeLimits = JSON_SHAPE_LIMITS): void {
  const stack: Node[] = [{ value, depth: 0 }];
  let values = 0;
  while (stack.length > 0) {
    const node = stack.pop()!;
    const v = node.value;
    if (++values > limits.maxValues) throw refused(field, `holds more than ${limits.maxValues} values`);
    if (v === null || typeof v !== 'object') continue;
    if (node.depth >= limits.maxDepth) throw refused(pathOf(node, field), `is nested more than ${limits.maxDepth} levels deep`);
    if (Array.isArray(v)) {
      if (v.length > limits.maxArrayLength) throw refused(pathOf(node, field), `has more than ${limits.maxArrayLength} elements`);
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], depth: node.depth + 1, parent: node, key: i });
      continue;
    }
    const keys = Object.keys(v);
    if (keys.length > limits.maxKeysPerObject) throw refused(pathOf(node, field), `has more than ${limits.maxKeysPerObject} keys`);
    for (const key of keys) {
      if (key === '__proto__') throw refused(`${pathOf(node, field)}.__proto__`, 'is not an allowed key');
      stack.push({ value: (v as Record<string, unknown>)[key], depth: node.depth + 1, parent: node, key });
    }
  }
}

/** A value on the walk; its path is spelled out only when it is refused. */
interface Node {
  readonly value: unknown;
  readonly depth: number;
  readonly parent?: Node;
  readonly key?: string | number;
}

function pathOf(node: Node, field: string): string {
  const parts: string[] = [];
  for (let n: Node | undefined = node; n?.parent; n = n.parent) parts.push(typeof n.key === 'number' ? `[${n.key}]` : `.${n.key}`);
  return field + parts.reverse().join('');
}

function refused(path: string, problem: string) {
  return invalid('request.shape', `${path} ${problem}`, { [path]: problem });
}
