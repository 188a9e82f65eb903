"""``DistributedStrategy``'s prototxt: protobuf's text format, which paddle's
``save_to_prototxt`` writes and its ``load_from_prototxt`` reads, so that a file either writes
the other loads. pycoll has no protobuf: this is the part of the format a strategy uses
(``name: value`` fields, ``name { ... }`` messages, a repeated field given once per value or as
``name: [a, b]``, ``#`` comments).

A file holds the fields that differ from their defaults, as paddle's does (protobuf writes the
fields that were set). Two settings paddle keeps outside its protobuf, and so never saves
(``hybrid_parallel_order``, ``sync_param_name``), pycoll saves on comment lines of their own
(``#pycoll name: JSON``), which protobuf's reader skips.
"""
from __future__ import annotations

import codecs
import json
import re
from collections.abc import Mapping
from typing import Any, Dict, List, Set, Tuple

EXTRA = "#pycoll "  # the start of a line that holds a setting paddle does not save
_TOKEN = re.compile(r'\s+|#[^\n]*|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[{}<>\[\]:,;]|[^\s{}<>\[\]:,;"\'#]+')
_INT = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|\d+)$")
_FLOAT = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?[fF]?$|[-+]?(?:inf|infinity|nan)$", re.IGNORECASE)
_CLOSERS = {"{": "}", "<": ">"}


def dump(tree: Mapping, defaults: Mapping, always: Mapping, extras: Mapping) -> str:
    """The text of the fields of ``tree`` that differ from ``defaults`` (and of those ``always``
    names: a nested dict of names to write whatever their value), then ``extras`` as comments."""
    lines = _lines(tree, defaults, always, "")
    lines += [f"{EXTRA}{name}: {json.dumps(value)}" for name, value in extras.items()]
    return "\n".join(lines) + "\n"


def _lines(tree: Mapping, defaults: Mapping, always: Any, pad: str) -> List[str]:
    lines: List[str] = []
    for name, value in tree.items():
        default = defaults.get(name) if isinstance(defaults, Mapping) else None
        given = always.get(name) if isinstance(always, Mapping) else None
        if isinstance(value, Mapping):
            inner = _lines(value, default if isinstance(default, Mapping) else {}, given, pad + "  ")
            if inner:
                lines += [f"{pad}{name} {{", *inner, f"{pad}}}"]
        elif value != default or given is True:
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, Mapping):
                    lines += [f"{pad}{name} {{", *_lines(item, {}, None, pad + "  "), f"{pad}}}"]
                else:
                    lines.append(f"{pad}{name}: {_scalar_text(item)}")
    return lines


def _scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    for raw, escaped in (("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t")):
        text = text.replace(raw, escaped)
    return '"' + re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\{ord(m.group()):03o}", text) + '"'


def parse(text: str, where: str) -> Tuple[Dict[str, List[Any]], Dict[str, Any]]:
    """(each field's values in the order given, nested messages as such dicts; the ``#pycoll``
    extras). ValueError naming ``where`` and the place for text that is not protobuf's."""
    extras = {}
    for line in text.splitlines():
        if line.startswith(EXTRA):
            name, _, value = line[len(EXTRA):].partition(":")
            extras[name.strip()] = json.loads(value)
    if sum(len(m.group()) for m in _TOKEN.finditer(text)) != len(text):  # a quote left open
        raise ValueError(f"{where}: a string is not closed (not protobuf's text format, what paddle's "
                         f"save_to_prototxt writes)")
    tokens = [t for t in _TOKEN.findall(text) if not t.isspace() and not t.startswith("#")]
    return _message(tokens, 0, None, where)[0], extras


def _message(tokens: List[str], i: int, closer: Any, where: str) -> Tuple[Dict[str, List[Any]], int]:
    fields: Dict[str, List[Any]] = {}
    try:
        while i < len(tokens) and tokens[i] != closer:
            name = tokens[i]
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise _Unexpected(name)
            i += 1
            if tokens[i] == ":":
                i += 1
            if tokens[i] in _CLOSERS:
                value, i = _message(tokens, i + 1, _CLOSERS[tokens[i]], where)
                fields.setdefault(name, []).append(value)
            elif tokens[i] == "[":
                i += 1
                while tokens[i] != "]":
                    if tokens[i] in _CLOSERS:
                        value, i = _message(tokens, i + 1, _CLOSERS[tokens[i]], where)
                    else:
                        value, i = _scalar(tokens[i]), i + 1
                    fields.setdefault(name, []).append(value)
                    if tokens[i] == ",":
                        i += 1
                i += 1
            else:
                fields.setdefault(name, []).append(_scalar(tokens[i]))
                i += 1
            if i < len(tokens) and tokens[i] in (",", ";"):
                i += 1
    except IndexError:
        raise ValueError(f"{where}: the text ends inside a field (not protobuf's text format, what paddle's "
                         f"save_to_prototxt writes)") from None
    except _Unexpected as exc:
        raise ValueError(f"{where}: {exc.args[0]!r} where a field name belongs (not protobuf's text format, "
                         f"what paddle's save_to_prototxt writes)") from None
    if closer is not None:
        if i >= len(tokens):
            raise ValueError(f"{where}: a message is not closed with {closer!r}")
        i += 1
    return fields, i


class _Unexpected(Exception):
    pass


def _scalar(token: str) -> Any:
    if token[0] in "\"'":
        return codecs.escape_decode(token[1:-1].encode("utf-8"))[0].decode("utf-8")
    if token in ("true", "True", "t"):
        return True
    if token in ("false", "False", "f"):
        return False
    if _INT.match(token):
        return int(token, 0)
    if _FLOAT.match(token):
        return float(token.rstrip("fF"))
    if token in "{}<>[]:,;":
        raise _Unexpected(token)
    return token  # an enum's name


def typed(fields: Mapping, defaults: Mapping, prefix: str, unknown: Set[str]) -> Dict[str, Any]:
    """``fields`` (from :func:`parse`) shaped by ``defaults``: a message field is one dict (its
    occurrences merged), a list field the list of its values, another field its last value
    (protobuf's rule). Names ``defaults`` lacks go into ``unknown`` (with ``prefix``)."""
    out: Dict[str, Any] = {}
    for name, values in fields.items():
        if name not in defaults:
            unknown.add(prefix + name)
            continue
        default = defaults[name]
        if isinstance(default, Mapping):
            merged: Dict[str, Any] = {}
            for value in values:
                if not isinstance(value, Mapping):
                    raise TypeError(f"{prefix}{name} is a message ({name} {{ ... }}), got {value!r}")
                merged.update(typed(value, default, f"{prefix}{name}.", unknown))
            out[name] = merged
        elif isinstance(default, list):
            out[name] = list(values)
        else:
            out[name] = values[-1]
    return out
