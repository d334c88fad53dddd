import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';

/** What a handler's own code does, read from its source, and what its `@OpenApi` decorator says of it. */
export interface HandlerSource {
  /** `Class.method`. */
  readonly handler: string;
  readonly file: string;
  /** Its HTTP method decorator (`Post`, `Get` …). */
  readonly verb: string;
  /** Line of the handler's name (1-based), for the codemod and messages. */
  readonly line: number;
  /** DTO classes passed to validateBody / validateBodyInSlices / checkDto in the handler or the helpers it calls. */
  readonly validated: string[];
  /** A DTO chosen at run time (`validateBody(dto, …)` with a variable). */
  readonly dynamic: boolean;
  /** It calls `statusFor` (answers 202 when the projections lag). */
  readonly answersAccepted: boolean;
  /** It takes the whole query object (`@Query() q`). */
  readonly wholeQuery: boolean;
  /** It writes its own response (`@Res()` without passthrough), so Nest's default status is not what it answers. */
  readonly writesResponse: boolean;
  /** It names its status with `@HttpCode`. */
  readonly httpCode: boolean;
  /** It takes the parsed body (`@Body()`). */
  readonly takesBody: boolean;
  /** Line (1-based) of its first decorator. */
  readonly firstDecoratorLine: number;
  /** The decorator's `body` class names, `statuses`, `query`, `form`, `freeBody`; undefined without a decorator. */
  readonly declared?: { body: string[]; statuses: number[]; query: string[]; form: boolean; freeBody: boolean; status: boolean; like: boolean };
}

const VALIDATORS = new Set(['validateBody', 'validateBodyInSlices', 'checkDto']);
const HTTP = new Set(['Get', 'Post', 'Put', 'Patch', 'Delete', 'All']);

export function controllerFiles(root: string): string[] {
  return readdirSync(root).flatMap((name) => {
    const path = join(root, name);
    return statSync(path).isDirectory() ? controllerFiles(path) : name.endsWith('.controller.ts') ? [path] : [];
  });
}

const decoratorsOf = (node: ts.Node): ts.Decorator[] => (ts.canHaveDecorators(node) ? [...(ts.getDecorators(node) ?? [])] : []);
const calleeName = (d: ts.Decorator): string | undefined => (ts.isCallExpression(d.expression) && ts.isIdentifier(d.expression.expression) ? d.expression.expression.text : undefined);

/** Every handler of every controller class in a file (or in `text`, as if it were that file). */
export function handlersOf(file: string, text = readFileSync(file, 'utf8')): HandlerSource[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const functions = new Map<string, ts.Node>();
  source.forEachChild((n) => {
    if (ts.isFunctionDeclaration(n) && n.name) functions.set(n.name.text, n);
    if (ts.isVariableStatement(n)) for (const d of n.declarationList.declarations) if (ts.isIdentifier(d.name) && d.initializer) functions.set(d.name.text, d.initializer);
  });
  const out: HandlerSource[] = [];
  source.forEachChild((cls) => {
    if (!ts.isClassDeclaration(cls) || !cls.name) return;
    const methods = new Map<string, ts.MethodDeclaration>();
    for (const m of cls.members) if (ts.isMethodDeclaration(m) && ts.isIdentifier(m.name)) methods.set(m.name.text, m);
    for (const [name, m] of methods) {
      const decorators = decoratorsOf(m);
      if (!decorators.some((d) => HTTP.has(calleeName(d) ?? ''))) continue;
      const reach = { validated: new Set<string>(), dynamic: false, accepted: false };
      walk(m, reach, methods, functions, new Set());
      const openApi = decorators.find((d) => calleeName(d) === 'OpenApi');
      out.push({
        handler: `${cls.name.text}.${name}`,
        file,
        verb: decorators.map(calleeName).find((n) => HTTP.has(n ?? '')) as string,
        line: source.getLineAndCharacterOfPosition(m.name.getStart()).line + 1,
        validated: [...reach.validated].sort(),
        dynamic: reach.dynamic,
        answersAccepted: reach.accepted,
        wholeQuery: m.parameters.some((p) => decoratorsOf(p).some((d) => calleeName(d) === 'Query' && (d.expression as ts.CallExpression).arguments.length === 0)),
        writesResponse: m.parameters.some((p) => decoratorsOf(p).some((d) => calleeName(d) === 'Res' && (d.expression as ts.CallExpression).arguments.length === 0)),
        httpCode: decorators.some((d) => calleeName(d) === 'HttpCode'),
        takesBody: m.parameters.some((p) => decoratorsOf(p).some((d) => calleeName(d) === 'Body')),
        firstDecoratorLine: source.getLineAndCharacterOfPosition(decorators[0].getStart()).line + 1,
        declared: openApi ? declaredOf(openApi) : undefined,
      });
    }
  });
  return out;
}

/** Follows the handler's calls into its class's other methods and the file's functions. */
function walk(node: ts.Node, reach: { validated: Set<string>; dynamic: boolean; accepted: boolean }, methods: Map<string, ts.Node>, functions: Map<string, ts.Node>, seen: Set<ts.Node>): void {
  if (seen.has(node)) return;
  seen.add(node);
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n)) {
      const callee = n.expression;
      const name = ts.isIdentifier(callee) ? callee.text : undefined;
      if (name && VALIDATORS.has(name)) {
        const first = n.arguments[0];
        const dto = first && ts.isAsExpression(first) ? first.expression : first;
        if (dto && ts.isIdentifier(dto) && /^[A-Z]/.test(dto.text)) reach.validated.add(dto.text);
        else reach.dynamic = true;
      }
      if (name === 'statusFor') reach.accepted = true;
      if (name && functions.has(name)) walk(functions.get(name) as ts.Node, reach, methods, functions, seen);
      if (ts.isPropertyAccessExpression(callee) && callee.expression.kind === ts.SyntaxKind.ThisKeyword && methods.has(callee.name.text)) {
        walk(methods.get(callee.name.text) as ts.Node, reach, methods, functions, seen);
      }
    }
    n.forEachChild(visit);
  };
  node.forEachChild(visit);
}

function declaredOf(d: ts.Decorator): HandlerSource['declared'] {
  const arg = (d.expression as ts.CallExpression).arguments[0];
  const out = { body: [] as string[], statuses: [] as number[], query: [] as string[], form: false, freeBody: false, status: false, like: false };
  if (!arg || !ts.isObjectLiteralExpression(arg)) return out;
  for (const p of arg.properties) {
    if (!ts.isPropertyAssignment(p) || !ts.isIdentifier(p.name)) continue;
    const items = ts.isArrayLiteralExpression(p.initializer) ? [...p.initializer.elements] : [p.initializer];
    if (p.name.text === 'body') out.body = items.map((e) => e.getText());
    if (p.name.text === 'statuses') out.statuses = items.map((e) => Number(e.getText()));
    if (p.name.text === 'query') out.query = items.map((e) => (ts.isStringLiteral(e) ? e.text : e.getText()));
    if (p.name.text === 'form') {
      out.form = true;
      // DTO-valued fields are validated form parts: they count as the handler's validated DTOs.
      if (ts.isObjectLiteralExpression(p.initializer)) {
        for (const f of p.initializer.properties) if (ts.isPropertyAssignment(f) && ts.isIdentifier(f.initializer)) out.body.push(f.initializer.text);
      }
    }
    if (p.name.text === 'freeBody') out.freeBody = true;
    if (p.name.text === 'status') out.status = true;
    if (p.name.text === 'like') out.like = true;
  }
  return out;
}

/** What the handler's `@OpenApi` fails to say of what its code does, one line each; empty when they agree. */
export function mismatches(h: HandlerSource): string[] {
  const d = h.declared;
  const at = `${h.handler} (${h.file}:${h.line})`;
  const out: string[] = [];
  if (d?.like) return out;
  const declared = [...(d?.body ?? [])].sort();
  if ((h.takesBody || h.validated.length) && !declared.length && !d?.freeBody) out.push(`${at} takes a body its @OpenApi does not describe`);
  if (h.dynamic) {
    const missing = h.validated.filter((v) => !declared.includes(v));
    if (missing.length) out.push(`${at} validates ${missing.join(', ')}, which its @OpenApi does not name`);
  } else if (h.validated.join() !== declared.join()) {
    out.push(`${at} validates [${h.validated.join(', ')}] but its @OpenApi names [${declared.join(', ')}]`);
  }
  if (h.answersAccepted && !d?.statuses.includes(202)) out.push(`${at} answers 202 (statusFor) but its @OpenApi does not list it`);
  if (h.wholeQuery && !d?.query.length) out.push(`${at} reads the whole query but its @OpenApi names no query parameters`);
  if (h.writesResponse && h.verb === 'Post' && !h.httpCode && !d?.status) out.push(`${at} writes its own response: its @OpenApi must say its success status`);
  return out;
}
