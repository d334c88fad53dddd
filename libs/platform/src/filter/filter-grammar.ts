/**
 * The metadata filter language as a peggy grammar; the actions build `FilterExpr` nodes
 * (filter/filter.ts). Precedence NOT > AND > OR; keywords and levels are case-insensitive; nested AND/OR
 * are flattened. Named rules ("field", "value", …) are what syntax errors say was expected.
 */
export const FILTER_GRAMMAR = String.raw`
{{
  function flatten(kind, head, tail) {
    if (tail.length === 0) return head;
    return { kind, items: [head, ...tail].flatMap((e) => (e.kind === kind ? e.items : [e])) };
  }
}}

Filter = _ @Or _

Or = head:And tail:(_ OR _ @And)* { return flatten('or', head, tail); }

And = head:Unary tail:(_ AND _ @Unary)* { return flatten('and', head, tail); }

Unary
  = NOT _ item:Unary { return { kind: 'not', item }; }
  / "(" _ @Or _ ")"
  / Predicate

Predicate = field:Field _ make:Condition { return make(field); }

Condition
  = IS _ NOT _ NULL { return (field) => ({ kind: 'is_null', field, negated: true }); }
  / IS _ NULL { return (field) => ({ kind: 'is_null', field, negated: false }); }
  / NOT _ IN _ values:List { return (field) => ({ kind: 'not', item: { kind: 'in', field, values } }); }
  / IN _ values:List { return (field) => ({ kind: 'in', field, values }); }
  / NOT _ LIKE _ pattern:Pattern { return (field) => ({ kind: 'not', item: { kind: 'like', field, pattern } }); }
  / LIKE _ pattern:Pattern { return (field) => ({ kind: 'like', field, pattern }); }
  / op:CmpOp _ value:Value { return (field) => ({ kind: 'cmp', field, op, value }); }

CmpOp
  = "==" { return '='; }
  / "=" { return '='; }
  / "!=" { return '!='; }
  / "<>" { return '!='; }
  / "<="
  / ">="
  / "<"
  / ">"

List = "(" _ head:Value tail:(_ "," _ @Value)* _ ")" { return [head, ...tail]; }

Field "field (doc.<name> or part.<name>)" = level:Level "." name:Name { return { level, name }; }

Level = "doc"i !IdentChar { return 'doc'; } / "part"i !IdentChar { return 'part'; }

Name = $IdentChar+ / QuotedName

QuotedName
  = '"' chars:QuotedNameChar+ '"' { return chars.join(''); }
  / '"' '"' { error('a quoted field name cannot be empty'); }
  / '"' QuotedNameChar* { error('unterminated field name: missing closing "'); }

QuotedNameChar = "\\" @["\\] / "\\" / [^"\\]

Value "value (a 'string', a number, true or false)" = String / Number / Boolean

Pattern "LIKE pattern (a 'string')" = String

String
  = "'" chars:StringChar* "'" { return chars.join(''); }
  / "'" StringChar* { error("unterminated string: missing closing '"); }

StringChar = "''" { return "'"; } / "\\" @['\\] / "\\" / [^'\\]

Number = text:$([+-]? (Digits ("." Digits?)? / "." Digits) ([eE] [+-]? Digits)?) !IdentChar {
    const n = Number(text);
    if (!Number.isFinite(n)) error('number out of range: ' + text);
    return n;
  }

Digits = [0-9]+

Boolean = "true"i !IdentChar { return true; } / "false"i !IdentChar { return false; }

IdentChar = [A-Za-z0-9_]

AND = "AND"i !IdentChar
OR = "OR"i !IdentChar
NOT = "NOT"i !IdentChar
IN = "IN"i !IdentChar
IS = "IS"i !IdentChar
LIKE = "LIKE"i !IdentChar
NULL = "NULL"i !IdentChar

_ "whitespace" = [ \t\r\n]*
`;
