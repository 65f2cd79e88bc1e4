"""The one format that crosses between the checker and a student's kernel: plain data as bytes.

Both directions carry only tensors (exactly ``torch.Tensor``), ``bool``, ``int``, ``float``,
``str``, ``None``, ``torch.dtype``, ``torch.Size``, and tuples, lists and dicts of them.
:func:`encode` writes such a value with ``torch.save``; :func:`decode` reads it with
``torch.load(weights_only=True)``, whose unpickler builds nothing but tensors and containers, and
then walks the result (:func:`check_plain`), so that decoding a reply can never run code and
nothing else comes through. As text (:func:`to_text`, :func:`from_text`: requests and replies are
comm messages, :mod:`coursetools.checker.kernel_link`) a value without tensors, dtypes or sizes, the
most common by far (strings, numbers, lists of them), is JSON with tuples and dicts tagged
(``{"t": [...]}``, ``{"d": [[key, value], ...]}``), read back by ``json.loads`` (which builds
nothing but strings, numbers, lists and dicts) and the same strict walk; any other value is the
``torch.save`` bytes in base64. A prefix says which.

References are plain data too: ``{REF: ...}`` dicts, which only the side that made them gives a
meaning (a handle the kernel keeps, a name of the notebook).
"""

from __future__ import annotations

import base64
import io
import json
import zipfile
from typing import Any

import torch

REF = "__course_ref__"  # the key of a reference: {REF: "handle", "id": 3} or {REF: "name", "name": "f"}
MAX_BYTES = 64 * 2**20  # a message larger than this is refused, not decoded
MAX_JSON_ITEMS = 2**20  # JSON's small items grow tenfold as Python objects: at most this many commas
MAX_DEPTH = 32
_LEAVES = (bool, int, float, str, type(None), torch.dtype)
_JSON_LEAVES = (bool, int, float, str, type(None))
JSON, TORCH = "json:", "torch:"  # the prefixes of the two text forms


class NotPlainData(TypeError):
    """A value that cannot cross: its type is not one of the plain types."""


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


def encode(value: Any) -> bytes:
    """``value`` (plain data, checked first) as bytes."""
    check_plain(value)
    buffer = io.BytesIO()
    torch.save(value, buffer)
    return buffer.getvalue()


def decode(data: bytes) -> Any:
    """The plain value ``data`` holds; :class:`NotPlainData` when it holds anything else."""
    if len(data) > MAX_BYTES:
        raise NotPlainData(f"a reply of {len(data)} bytes (more than {MAX_BYTES}) was refused")
    _check_records(data)
    try:
        value = torch.load(io.BytesIO(data), weights_only=True)
    except Exception as error:  # noqa: BLE001 - whatever the unpickler refused, say so
        raise NotPlainData(f"a reply that is not plain data was refused ({type(error).__name__}: "
                           f"{str(error).splitlines()[0][:200] if str(error) else ''})") from None
    check_plain(value)
    return value


def _check_records(data: bytes) -> None:
    """Refuse ``torch.save`` bytes that would grow when loaded: ``torch.save`` stores its records
    uncompressed, so a compressed record (1.4 MB of DEFLATE inflate to 1 GiB) or records that claim
    more bytes than the message holds are refused before ``torch.load`` reads anything. (torch then
    checks each storage's declared size against its record before allocating it.)"""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            records = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as error:
        raise NotPlainData(f"a reply that is not plain data was refused (not torch.save bytes: "
                           f"{type(error).__name__})") from None
    compressed = [r.filename for r in records
                  if r.compress_type != zipfile.ZIP_STORED or r.file_size != r.compress_size]
    if compressed:
        raise NotPlainData(f"a reply with compressed records was refused ({compressed[0]}; torch.save compresses "
                           "nothing)")
    declared = sum(r.file_size for r in records)
    if declared > len(data):
        raise NotPlainData(f"a reply whose records claim {declared} bytes in {len(data)} was refused")


def to_text(value: Any) -> str:
    """``value`` (plain data, checked first) as text: JSON when it holds no tensor, dtype or size."""
    check_plain(value)
    try:
        return JSON + json.dumps(_json_form(value), separators=(",", ":"))
    except (_NotJson, ValueError):  # a tensor; an int too long for JSON
        return TORCH + base64.b64encode(encode(value)).decode("ascii")


def from_text(text: str) -> Any:
    """The plain value ``text`` holds; :class:`NotPlainData` when it holds anything else."""
    if type(text) is not str:
        raise NotPlainData(f"a reply of type {type(text).__name__} was refused (text was expected)")
    if len(text) > MAX_BYTES * 4 // 3 + 8:
        raise NotPlainData(f"a reply of {len(text)} characters (more than {MAX_BYTES} bytes) was refused")
    if text.startswith(JSON):
        if text.count(",") > MAX_JSON_ITEMS:
            raise NotPlainData(f"a JSON reply of more than {MAX_JSON_ITEMS} items was refused")
        try:
            value = _from_json_form(json.loads(text[len(JSON):]))
        except (ValueError, TypeError, RecursionError) as error:  # bad JSON, a bad tag, an unhashable key
            raise NotPlainData(f"a reply that is not plain data was refused ({type(error).__name__})") from None
        check_plain(value)
        return value
    if not text.startswith(TORCH):
        raise NotPlainData(f"a reply that starts with neither {JSON!r} nor {TORCH!r} was refused")
    try:
        data = base64.b64decode(text[len(TORCH):].encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        raise NotPlainData("a reply that is not base64 was refused") from None
    return decode(data)


class _NotJson(Exception):
    """The value holds a tensor, a dtype or a size: it crosses as ``torch.save`` bytes."""


def _json_form(value: Any) -> Any:
    """``value`` (checked plain) as JSON's values: a tuple ``{"t": items}``, a dict ``{"d": pairs}``."""
    kind = type(value)
    if kind in _JSON_LEAVES:
        return value
    if kind is list:
        return [_json_form(item) for item in value]
    if kind is tuple:
        return {"t": [_json_form(item) for item in value]}
    if kind is dict:
        return {"d": [[_json_form(key), _json_form(item)] for key, item in value.items()]}
    raise _NotJson


def _from_json_form(value: Any, depth: int = 0) -> Any:
    """The value :func:`_json_form` gave ``value`` for; ``ValueError`` for anything it never writes."""
    if depth > MAX_DEPTH:
        raise ValueError("nested too deep")
    kind = type(value)
    if kind in _JSON_LEAVES:
        return value
    if kind is list:
        return [_from_json_form(item, depth + 1) for item in value]
    if kind is dict and len(value) == 1 and type(value.get("t")) is list:
        return tuple(_from_json_form(item, depth + 1) for item in value["t"])
    if kind is dict and len(value) == 1 and type(value.get("d")) is list:
        pairs = value["d"]
        if not all(type(pair) is list and len(pair) == 2 for pair in pairs):
            raise ValueError("a dict's items are not pairs")
        return {_from_json_form(key, depth + 1): _from_json_form(item, depth + 1) for key, item in pairs}
    raise ValueError(f"a JSON {kind.__name__} that is not a tagged tuple or dict")


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
