"""JSON twins as bytes: one pass of json's C encoder, numpy values through its `default=` hook,
and the slow recursive clean-up (`_clean`) only for data that holds a non-finite number."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np


def _plain(value: Any) -> Any:
    """What the JSON encoder cannot write itself: a numpy number or array as the Python number
    or list it holds; anything else as its text."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def _clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities become null (they are not JSON), keys become text."""
    if isinstance(value, (np.generic, np.ndarray)):
        value = _plain(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


# the C encoder (no indent: an indent makes json fall back to its pure-Python encoder, which
# was a third of the ask page's time under load, issue 30); allow_nan=False makes a NaN or an
# infinity an error instead of the non-JSON token `NaN`
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=_plain, separators=(",", ":"),
                            check_circular=False)  # plain data; a cycle would be a RecursionError


def encode(data: Any) -> bytes:
    """`data` as compact JSON in one pass of the C encoder. Only data that holds a non-finite
    number (or a key that is not text or a number) takes the slow way: `_clean`, then again."""
    try:
        text = _ENCODER.encode(data)
    except (ValueError, TypeError):
        text = _ENCODER.encode(_clean(data))
    return text.encode("utf-8")
