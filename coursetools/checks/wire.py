"""The one format that crosses between the checker and a student's kernel: plain data as JSON text.

Both directions carry only tensors (exactly ``torch.Tensor``), ``bool``, ``int``, ``float``,
``str``, ``None``, ``torch.dtype``, ``torch.Size``, and tuples, lists and dicts of them.
:func:`to_text` writes such a value as JSON, with the kinds JSON lacks tagged: a tuple
``{"t": [...]}``, a dict ``{"d": [[key, value], ...]}``, a dtype ``{"dtype": "float32"}``, a size
``{"size": [2, 3]}``, a tensor ``{"x": [dtype, shape, its bytes in base64, requires_grad]}``.
:func:`from_text` reads nothing else: no pickle, no archive, nothing that builds objects of its own
choosing. A reply is the student's (the kernel's bridge can be replaced), so every limit holds
*while* it is read, before anything is built from it:

* the text: at most :data:`MAX_TEXT` characters (ZeroMQ refuses a longer message unread,
  :mod:`coursetools.checker.kernel_link`);
* its shape, scanned before JSON is parsed: at most :data:`MAX_ITEMS` items and
  :data:`MAX_JSON_DEPTH` levels of nesting (a reply of twelve million nested lists is refused at
  the 101st, without reading further);
* each tensor: the bytes its dtype and shape claim (number of elements times element size, whatever
  its strides: a stride-0 ``expand`` claims all of its elements) at most :data:`MAX_TENSOR_BYTES`,
  and exactly the bytes it carries. The sender checks the same before it copies anything.

The kernel's side reads and writes with references taken when this module is imported, before any
student code runs: JSON's C scanner and encoder, ``binascii``'s C functions, a compiled pattern; a
student who replaces ``json``, ``base64`` or ``binascii`` in the kernel changes nothing here, and
this module is guarded (:func:`coursetools.checks.tamper.guard`).

References are plain data too: ``{REF: ...}`` dicts, which only the side that made them gives a
meaning (a handle the kernel keeps, a name of the notebook).
"""

from __future__ import annotations

import binascii
import json.encoder
import json.scanner
import math
import re
import types
from typing import Any

import torch

REF = "__course_ref__"  # the key of a reference: {REF: "handle", "id": 3} or {REF: "name", "name": "f"}
JSON = "json:"  # the prefix of every message's text
MAX_TEXT = 64 * 2**20  # characters of a message's text (ASCII: bytes too)
MAX_TENSOR_BYTES = MAX_TEXT // 4 * 3  # a tensor's bytes, at most: 48 MiB, what 64 MiB of base64 carry
MAX_ITEMS = 2**20  # JSON's small items grow tenfold as Python objects: at most this many
MAX_DEPTH = 32  # levels of plain data
MAX_JSON_DEPTH = 3 * MAX_DEPTH + 4  # levels of JSON: a dict takes three ({"d": [[key, value]]}), a tensor three
MAX_DIMS = 64  # a tensor's dimensions, as torch allows
_LEAVES = (bool, int, float, str, type(None), torch.dtype)
_JSON_LEAVES = (bool, int, float, str, type(None))
_DTYPES = types.MappingProxyType({str(v).removeprefix("torch."): v for v in vars(torch).values()
                                  if isinstance(v, torch.dtype)})
_TENSOR_DTYPES = frozenset({torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
                            torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64,
                            torch.complex128})
# JSON's structure outside strings: a string (skipped whole), or a bracket or a comma (counted)
_STRUCTURE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},]')
_prod, _b64encode, _b64decode = math.prod, binascii.b2a_base64, binascii.a2b_base64


class NotPlainData(TypeError):
    """A value that cannot cross: its type is not one of the plain types, or it is too large."""


def check_plain(value: Any, where: str = "the value", depth: int = 0) -> None:
    """Raise :class:`NotPlainData` naming the first part of ``value`` that is not plain data.

    Exact types only: a ``Tensor`` subclass, an ``nn.Parameter``, a ``dict`` or ``tuple`` subclass
    (other than ``torch.Size``) or anything else is refused.
    """
    if depth > MAX_DEPTH:
        raise NotPlainData(f"{where} is nested more than {MAX_DEPTH} levels deep")
    kind = type(value)
    if kind is torch.Tensor or kind in _LEAVES or kind is torch.Size:
        return
    if kind in (tuple, list):
        for i, item in enumerate(value):
            check_plain(item, f"{where}[{i}]", depth + 1)
        return
    if kind is dict:
        for key, item in value.items():
            check_plain(key, f"a key of {where}", depth + 1)
            check_plain(item, f"{where}[{key!r}]", depth + 1)
        return
    raise NotPlainData(f"{where} is a {kind.__module__}.{kind.__qualname__}: only tensors, numbers, strings, "
                       "bools, None and tuples, lists and dicts of them cross to the tests")


# --- writing --------------------------------------------------------------------------------

def _refuse_unknown(value: Any) -> Any:
    raise NotPlainData(f"a {type(value).__name__} has no JSON form")


# JSON's own C encoder, taken now: (markers, default, encode a string, indent, ":", ",", sort keys,
# skip keys, allow NaN). Markers None: the values it writes are trees, made here.
_encoder = json.encoder.c_make_encoder(None, _refuse_unknown, json.encoder.c_encode_basestring_ascii, None,
                                       ":", ",", False, False, True)


def to_text(value: Any) -> str:
    """``value`` (plain data, checked first) as text; :class:`NotPlainData` when it is not plain or
    too large (a tensor is measured by the bytes it claims before any is copied)."""
    check_plain(value)
    try:
        text = JSON + "".join(_encoder(_json_form(value), 0))
    except ValueError as error:  # an int of more digits than Python writes
        raise NotPlainData(f"the value cannot be written ({str(error)[:200]})") from None
    if len(text) > MAX_TEXT:
        raise NotPlainData(f"the value takes {len(text):,} characters, more than the {MAX_TEXT:,} one message may")
    return text


def _json_form(value: Any) -> Any:
    """``value`` (checked plain) as JSON's values, tagged as the module's docstring says."""
    kind = type(value)
    if kind in _JSON_LEAVES:
        return value
    if kind is list:
        return [_json_form(item) for item in value]
    if kind is torch.Size:
        return {"size": list(value)}
    if kind is tuple:
        return {"t": [_json_form(item) for item in value]}
    if kind is dict:
        return {"d": [[_json_form(key), _json_form(item)] for key, item in value.items()]}
    if kind is torch.dtype:
        return {"dtype": str(value).removeprefix("torch.")}
    return {"x": _tensor_form(value)}


def _tensor_form(tensor: torch.Tensor) -> list:
    """[dtype, shape, bytes in base64, requires_grad]; the size it claims is checked before any copy."""
    claimed = tensor.numel() * tensor.element_size()
    if claimed > MAX_TENSOR_BYTES:
        raise NotPlainData(f"a tensor of shape {tuple(tensor.shape)} and dtype {tensor.dtype} holds {claimed:,} bytes "
                           f"(its number of elements times its element size), more than the {MAX_TENSOR_BYTES:,} "
                           "a tensor may carry to the tests")
    if tensor.dtype not in _TENSOR_DTYPES or tensor.layout != torch.strided:
        raise NotPlainData(f"a tensor of dtype {tensor.dtype} and layout {tensor.layout} cannot cross to the tests")
    flat = tensor.detach().cpu().resolve_conj().resolve_neg().contiguous().reshape(-1)
    data = flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""
    text = _b64encode(data, newline=False).decode("ascii")
    return [str(tensor.dtype).removeprefix("torch."), list(tensor.shape), text, tensor.requires_grad]


# --- reading --------------------------------------------------------------------------------

def _constant(name: str) -> float:
    return float(name)  # NaN, Infinity, -Infinity


# JSON's own C scanner, taken now, with this module's settings (nothing of json's module is read again)
_scan = json.scanner.c_make_scanner(types.SimpleNamespace(
    strict=True, object_hook=None, object_pairs_hook=None, parse_float=float, parse_int=int,
    parse_constant=_constant, memo={}))


def from_text(text: str) -> Any:
    """The plain value ``text`` holds; :class:`NotPlainData` when it holds anything else or passes
    a limit (checked before anything is built)."""
    if type(text) is not str:
        raise NotPlainData(f"a message of type {type(text).__name__} was refused (text was expected)")
    if len(text) > MAX_TEXT:
        raise NotPlainData(f"a message of {len(text):,} characters (more than {MAX_TEXT:,}) was refused")
    if not text.startswith(JSON):
        raise NotPlainData(f"a message that does not start with {JSON!r} was refused (the tests read JSON only)")
    _check_structure(text, len(JSON))
    try:
        found, end = _scan(text, len(JSON))
    except (StopIteration, ValueError, RecursionError):
        raise NotPlainData("a message that is not plain data was refused (not JSON)") from None
    if end != len(text):
        raise NotPlainData("a message that is not plain data was refused (more after its JSON value)")
    try:
        return _from_json_form(found)
    except (ValueError, TypeError, RuntimeError) as error:  # a bad tag, an unhashable key, a tensor's bad bytes
        raise NotPlainData(f"a message that is not plain data was refused ({str(error)[:300]})") from None


def _check_structure(text: str, start: int) -> None:
    """Refuse a JSON text of more than :data:`MAX_ITEMS` items or :data:`MAX_JSON_DEPTH` levels,
    reading it only until the limit is passed."""
    depth = items = 0
    for match in _STRUCTURE.finditer(text, start):
        char = text[match.start()]
        if char == "[" or char == "{":
            depth += 1
            items += 1
            if depth > MAX_JSON_DEPTH:
                raise NotPlainData(f"a message nested more than {MAX_JSON_DEPTH} levels deep was refused")
        elif char == "]" or char == "}":
            depth -= 1
        elif char == ",":
            items += 1
        if items > MAX_ITEMS:
            raise NotPlainData(f"a message of more than {MAX_ITEMS:,} items was refused")


def _from_json_form(value: Any, depth: int = 0) -> Any:
    """The value :func:`_json_form` gave ``value`` for; ``ValueError`` for anything it never writes."""
    if depth > MAX_DEPTH:
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep")
    kind = type(value)
    if kind in _JSON_LEAVES:
        return value
    if kind is list:
        return [_from_json_form(item, depth + 1) for item in value]
    if kind is not dict or len(value) != 1:
        raise ValueError(f"a JSON {kind.__name__} that is not a tagged value")
    (tag, inside), = value.items()
    if tag == "t" and type(inside) is list:
        return tuple(_from_json_form(item, depth + 1) for item in inside)
    if tag == "d" and type(inside) is list:
        if not all(type(pair) is list and len(pair) == 2 for pair in inside):
            raise ValueError("a dict's items are not pairs")
        return {_from_json_form(key, depth + 1): _from_json_form(item, depth + 1) for key, item in inside}
    if tag == "dtype" and type(inside) is str and inside in _DTYPES:
        return _DTYPES[inside]
    if tag == "size" and _is_shape(inside):
        return torch.Size(inside)
    if tag == "x" and type(inside) is list and len(inside) == 4:
        return _tensor(*inside)
    raise ValueError(f"a JSON object tagged {str(tag)[:40]!r} that is not a tuple, dict, dtype, size or tensor")


def _is_shape(value: Any) -> bool:
    return type(value) is list and len(value) <= MAX_DIMS and all(type(n) is int and n >= 0 for n in value)


def _tensor(dtype_name: Any, shape: Any, data: Any, requires_grad: Any) -> torch.Tensor:
    """A tensor from its form: the size its dtype and shape claim is checked against the limit, and
    against the bytes it carries, before those are decoded."""
    dtype = _DTYPES.get(dtype_name) if type(dtype_name) is str else None
    if dtype not in _TENSOR_DTYPES or not _is_shape(shape) or type(data) is not str or type(requires_grad) is not bool:
        raise ValueError("a tensor's form is not [dtype, shape, base64 bytes, requires_grad]")
    claimed = _prod(shape) * dtype.itemsize
    if claimed > MAX_TENSOR_BYTES:
        raise ValueError(f"a tensor of shape {tuple(shape)} and dtype {dtype} claims {claimed:,} bytes, more than the "
                         f"{MAX_TENSOR_BYTES:,} a tensor may carry")
    if len(data) != (claimed + 2) // 3 * 4:
        raise ValueError(f"a tensor claims {claimed:,} bytes and carries {len(data) // 4 * 3:,}")
    if not claimed:
        tensor = torch.empty(shape, dtype=dtype)
    else:
        raw = bytearray(_b64decode(data, strict_mode=True))
        tensor = torch.frombuffer(raw, dtype=torch.uint8).view(dtype).reshape(shape).clone()
        if dtype is torch.bool:
            tensor = tensor.view(torch.uint8) != 0  # a byte other than 0 or 1 is not a bool
    return tensor.requires_grad_(True) if requires_grad else tensor


def tensors_in(value: Any) -> list[torch.Tensor]:
    """The tensors of a plain value, in a fixed order (depth first, dicts in insertion order):
    both sides number a call's inputs and outputs this way."""
    if type(value) is torch.Tensor:
        return [value]
    if type(value) in (tuple, list):
        return [t for item in value for t in tensors_in(item)]
    if type(value) is dict:
        return [t for item in value.values() for t in tensors_in(item)]
    return []


def replace_tensors(value: Any, tensors: list[torch.Tensor]) -> Any:
    """``value`` with its tensors (in :func:`tensors_in` order) replaced by ``tensors``."""
    queue = iter(tensors)

    def walk(item: Any) -> Any:
        if type(item) is torch.Tensor:
            return next(queue)
        if type(item) in (tuple, list):
            return type(item)(walk(x) for x in item)
        if type(item) is dict:
            return {key: walk(x) for key, x in item.items()}
        return item

    return walk(value)
