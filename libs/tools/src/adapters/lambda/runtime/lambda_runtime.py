# The Python side of the lambda sandbox (docs/lambda-tools.md): discovers a lambda's input and output schemas
# from its `process` signature and docstring, runs it, and gives its code the `tool` and `artifacts` modules.
# Everything the code asks of the service goes through `_lambda_host` (two pipes to the parent), one JSON
# line per message.
import ast
import inspect
import json
import os
import re
import sys
import time
import traceback
import types
import typing

import builtins

import _lambda_host

SCRATCH = "/scratch"
ENTRY = "<lambda>"
_host_send = _lambda_host.send
_host_recv = _lambda_host.recv
del _lambda_host
sys.modules.pop("_lambda_host", None)

# Modules that lead to JavaScript: the caller's `import` refuses them (docs/lambda-tools.md, "The boundary").
_NO_JS = ("js", "pyodide_js", "pyodide", "_pyodide", "_pyodide_core", "_lambda_host", "micropip", "pyodide_http")


def _caller_builtins():
    """The builtins the lambda's code runs with: an `__import__` that refuses the modules leading to JavaScript."""
    real = builtins.__import__

    def guarded(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and name.split(".")[0] in _NO_JS:
            raise ImportError(f"No module named {name!r}: not available in the lambda sandbox")
        return real(name, globals, locals, fromlist, level)

    own = dict(builtins.__dict__)
    own["__import__"] = guarded
    return own


def _send(message):
    _host_send(json.dumps(message))


_answers = {}
_next_id = [0]


def _ask(kind, payload):
    _next_id[0] += 1
    rid = _next_id[0]
    _send({"type": kind, "id": rid, **payload})
    return rid


def _answer(rid):
    while rid not in _answers:
        message = json.loads(_host_recv())
        _answers[message.get("id")] = message
    return _answers.pop(rid)


# --- tool -------------------------------------------------------------------------------------------------
class ToolError(Exception):
    """A composed tool call that failed: its message is the tool's error."""


class _Handle:
    def __init__(self, rid, name):
        self._rid = rid
        self._name = name
        self._done = None

    def result(self):
        if self._done is None:
            self._done = _answer(self._rid)
        if not self._done.get("ok"):
            raise ToolError(str(self._done.get("error", f"{self._name} failed")))
        return self._done.get("output")


class _ToolFunction:
    def __init__(self, spec):
        self._spec = spec
        self.__name__ = spec["name"]
        self.__doc__ = spec.get("description", "")

    def submit(self, **kwargs):
        return _Handle(_ask("tool", {"name": self._spec["name"], "args": kwargs}), self._spec["name"])

    def __call__(self, **kwargs):
        return self.submit(**kwargs).result()


def _tool_module(specs):
    module = types.ModuleType("tool", "The tools this lambda declared in its tool_configurations.")
    module.ToolError = ToolError
    module.list = lambda: [dict(s) for s in specs]
    for spec in specs:
        setattr(module, spec["name"], _ToolFunction(spec))
    return module


# --- artifacts --------------------------------------------------------------------------------------------
class ArtifactError(Exception):
    """An unknown artifact, no session, or a destination outside the scratch directory."""


def _download(artifact_id, dest_path=None):
    if dest_path is None:
        target = None
    else:
        target = os.path.normpath(os.path.join(SCRATCH, str(dest_path)))
        if target != SCRATCH and not target.startswith(SCRATCH + "/"):
            raise ArtifactError(f"dest_path {dest_path!r} is outside the scratch directory {SCRATCH}")
    answer = _answer(_ask("artifact", {"artifact_id": str(artifact_id)}))
    if not answer.get("ok"):
        raise ArtifactError(str(answer.get("error", "no such artifact")))
    if target is None:
        name = os.path.basename(answer.get("filename") or str(artifact_id)) or str(artifact_id)
        target = os.path.join(SCRATCH, name)
    import base64

    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "wb") as f:
        f.write(base64.b64decode(answer["data"]))
    return target


def _artifacts_module():
    module = types.ModuleType("artifacts", "Session artifacts, copied into the scratch directory.")
    module.ArtifactError = ArtifactError
    module.download = _download
    module.SCRATCH_DIR = SCRATCH
    return module


# --- schemas ----------------------------------------------------------------------------------------------
class _Invalid(Exception):
    pass


def _docstring_params(doc):
    """Parameter descriptions from a Google, NumPy, ReST or Epydoc docstring."""
    found = {}
    if not doc:
        return found
    lines = inspect.cleandoc(doc).splitlines()
    for line in lines:
        m = re.match(r"^\s*[:@]param\s+(?:\w+\s+)?(\w+)\s*:\s*(.+)$", line)
        if m:
            found[m.group(1)] = m.group(2).strip()
    section = None
    current = None
    for i, line in enumerate(lines):
        stripped = line.strip()
        if re.match(r"^(Args|Arguments|Parameters|Params)\s*:?\s*$", stripped):
            numpy = i + 1 < len(lines) and re.match(r"^-{3,}$", lines[i + 1].strip())
            section = ("numpy" if numpy else "google", len(line) - len(line.lstrip()))
            current = None
            continue
        if section is None:
            continue
        if re.match(r"^-{3,}$", stripped):
            continue
        indent = len(line) - len(line.lstrip())
        if stripped and indent <= section[1] and not (section[0] == "numpy" and re.match(r"^\w+\s*(:.*)?$", stripped)):
            section = None
            continue
        if not stripped:
            continue
        if section[0] == "google":
            m = re.match(r"^(\w+)\s*(\([^)]*\))?\s*:\s*(.*)$", stripped)
            if m and indent > section[1] and (current is None or indent <= current[1]):
                current = (m.group(1), indent)
                found.setdefault(m.group(1), m.group(3).strip())
            elif current:
                found[current[0]] = (found.get(current[0], "") + " " + stripped).strip()
        else:
            m = re.match(r"^(\w+)\s*(:.*)?$", stripped)
            if m and indent <= section[1]:
                current = (m.group(1), indent)
                found.setdefault(m.group(1), "")
            elif current:
                found[current[0]] = (found.get(current[0], "") + " " + stripped).strip()
    return {k: v for k, v in found.items() if v}


def _schema(tp, where, parameter):
    if tp is inspect.Parameter.empty or tp is typing.Any:
        return {}
    if tp is type(None) or tp is None:
        return {"type": "null"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is str:
        return {"type": "string"}
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return _schema(args[0], where, parameter)
    if tp in (list, tuple, set) or origin in (list, tuple, set, typing.Sequence):
        item = args[0] if args else inspect.Parameter.empty
        return {"type": "array", **({"items": _schema(item, where + "[]", parameter)} if args else {})}
    if origin is typing.Literal:
        kinds = {type(a) for a in args}
        names = {bool: "boolean", int: "integer", float: "number", str: "string"}
        out = {"enum": list(args)}
        if len(kinds) == 1 and next(iter(kinds)) in names:
            out["type"] = names[next(iter(kinds))]
        return out
    if origin is typing.Union or isinstance(tp, types.UnionType):
        members = [a for a in args if a is not type(None)]
        if len(members) == 1:
            return _schema(members[0], where, parameter)
        return {"anyOf": [_schema(a, where, parameter) for a in members]}
    if typing.is_typeddict(tp):
        hints = typing.get_type_hints(tp)
        required = sorted(getattr(tp, "__required_keys__", set()))
        out = {"type": "object", "properties": {k: _schema(v, f"{where}.{k}", parameter) for k, v in hints.items()}, "additionalProperties": False}
        if required:
            out["required"] = required
        return out
    if tp is dict or origin is dict:
        if parameter:
            raise _Invalid(f"{where}: bare dict and Dict[K, V] parameters are not supported: declare the fields with a TypedDict")
        return {"type": "object"}
    raise _Invalid(f"{where}: type {getattr(tp, '__name__', repr(tp))} has no JSON schema: use str, int, float, bool, list, Literal, Optional or a TypedDict")


def _describe(process):
    try:
        hints = typing.get_type_hints(process, include_extras=True)
    except Exception as e:
        raise _Invalid(f"process: its type annotations could not be read: {e}")
    signature = inspect.signature(process)
    docs = _docstring_params(process.__doc__)
    properties = {}
    required = []
    for name, p in signature.parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise _Invalid(f"process: *{name} and **{name} parameters are not supported: name each parameter")
        schema = _schema(hints.get(name, inspect.Parameter.empty), name, True)
        if name in docs:
            schema["description"] = docs[name]
        if p.default is not inspect.Parameter.empty:
            try:
                json.dumps(p.default)
                if p.default is not None:
                    schema["default"] = p.default
            except TypeError:
                pass
        else:
            required.append(name)
        properties[name] = schema
    input_schema = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    output_schema = _schema(hints["return"], "return", False) if "return" in hints else None
    return input_schema, output_schema


def _load(code):
    """The lambda's namespace, or the list of reasons it is not valid."""
    try:
        ast.parse(code, ENTRY)
    except SyntaxError as e:
        return None, [f"Line {e.lineno}: {e.msg}"]
    namespace = {"__name__": "__lambda__", "__builtins__": _caller_builtins()}
    try:
        exec(compile(code, ENTRY, "exec"), namespace)
    except BaseException as e:
        return None, [f"the module failed to load: {type(e).__name__}: {e}"]
    process = namespace.get("process")
    if not callable(process):
        return None, ["the code must define a process() function: the entry point"]
    return namespace, []


def _traceback(e):
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == ENTRY]
    lines = ["Traceback (most recent call last):"]
    lines += [f'  File "{f.filename}", line {f.lineno}, in {f.name}' + (f"\n    {f.line}" if f.line else "") for f in frames]
    lines.append("".join(traceback.format_exception_only(type(e), e)).strip())
    return "\n".join(lines)


def _lambda_main(job_text):
    # The JavaScript modules were unregistered before this runs; what Pyodide's start imported goes too.
    for name in ("js", "pyodide_js", "_lambda_host"):
        sys.modules.pop(name, None)
    job = json.loads(job_text)
    os.makedirs(SCRATCH, exist_ok=True)
    os.chdir(SCRATCH)
    tool = _tool_module(job.get("tools", []))
    artifacts = _artifacts_module()
    sys.modules["tool"] = tool
    sys.modules["artifacts"] = artifacts
    started = time.perf_counter()
    namespace, errors = _load(job["code"])
    input_schema = output_schema = None
    if namespace is not None:
        namespace["tool"] = tool
        namespace["artifacts"] = artifacts
        try:
            input_schema, output_schema = _describe(namespace["process"])
        except _Invalid as e:
            errors = [str(e)]
    result = {"type": "result", "validation": {"status": "invalid" if errors else "valid", "errors": errors}, "input_schema": input_schema, "output_schema": output_schema}
    if not errors and job.get("run"):
        try:
            output = namespace["process"](**(job.get("args") or {}))
            try:
                text = json.dumps(output)
                result["execution"] = {"success": True, "output_json": text}
            except (TypeError, ValueError) as e:
                result["execution"] = {"success": False, "error": {"message": f"the return value is not JSON: {e}"}}
        except BaseException as e:
            result["execution"] = {"success": False, "error": {"message": f"{type(e).__name__}: {e}", "traceback": _traceback(e)}}
        result["execution"]["latency_millis"] = round((time.perf_counter() - started) * 1000)
    _send(result)
