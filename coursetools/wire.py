"""The one format that crosses between the checker and a student's kernel: plain data as bytes.

Both directions carry only tensors (exactly ``torch.Tensor``), ``bool``, ``int``, ``float``,
``str``, ``None``, ``torch.dtype``, ``torch.Size``, and tuples, lists and dicts of them.
:func:`encode` writes such a value with ``torch.save``; :func:`decode` reads it with
``torch.load(weights_only=True)``, whose unpickler builds nothing but tensors and containers, and
then walks the result (:func:`check_plain`), so that decoding a reply can never run code and
nothing else comes through. Text crosses as base64 (:func:`to_text`, :func:`from_text`): requests
are a line of code in the kernel, replies a display message.

References are plain data too: ``{REF: ...}`` dicts, which only the side that made them gives a
meaning (a handle the kernel keeps, a name of the notebook).
"""

from __future__ import annotations

import base64
import io
from typing import Any

import torch

REF = "__course_ref__"  # the key of a reference: {REF: "handle", "id": 3} or {REF: "name", "name": "f"}
MIME = "application/x-course-bridge"  # the display message that carries a reply
MAX_BYTES = 512 * 2**20  # a reply larger than this is refused, not decoded
MAX_DEPTH = 32
_LEAVES = (bool, int, float, str, type(None), torch.dtype)


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
    try:
        value = torch.load(io.BytesIO(data), weights_only=True)
    except Exception as error:  # noqa: BLE001 - whatever the unpickler refused, say so
        raise NotPlainData(f"a reply that is not plain data was refused ({type(error).__name__}: "
                           f"{str(error).splitlines()[0][:200] if str(error) else ''})") from None
    check_plain(value)
    return value


def to_text(value: Any) -> str:
    return base64.b64encode(encode(value)).decode("ascii")


def from_text(text: str) -> Any:
    try:
        data = base64.b64decode(text.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        raise NotPlainData("a reply that is not base64 was refused") from None
    return decode(data)


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
