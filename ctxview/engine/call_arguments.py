"""Grouping tool calls by their arguments: the bloat analysis's repeated calls (same tool, same
arguments). `args_key` is the rule (canonical JSON); `args_keys` and `args_groups` give the same
groups faster where every argument is plain JSON (tests/test_bloat_fastpath.py holds them equal)."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from typing import Any, Iterable, Mapping, Sequence

import orjson

__all__ = ["args_groups", "args_key", "args_keys"]


def args_key(args: Mapping[str, Any]) -> str:
    """The arguments as canonical JSON: equal for calls whose arguments are equal (it only groups)."""
    try:
        return json.dumps(dict(args), sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(args)


# objects, datetimes and subclasses of str, int, dict... raise instead of being written orjson's way
_ORJSON_KEY = (orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
               | orjson.OPT_PASSTHROUGH_SUBCLASS)


def _has_non_finite(value: Any) -> bool:
    if type(value) is float:
        return not math.isfinite(value)
    if type(value) is dict:
        return any(_has_non_finite(v) for v in value.values())
    if type(value) in (list, tuple):
        return any(_has_non_finite(v) for v in value)
    return False



def args_keys(arguments: Sequence[Mapping[str, Any]], names: Sequence[str] | None = None) -> list:
    """The key of each call's arguments, grouping them as args_key does; with `names` (the tool of
    each call), the key of each (name, arguments), grouping as (name, args_key(arguments)) does.
    When every one is made of plain JSON values (what the loaders give) the keys are orjson's
    canonical text, several times faster (and one bytes object hashes faster than a tuple); if any is
    not (orjson raises for a non-str key, an int past 64 bits, an object, a subclass; writes NaN and
    infinities as null, as it does None) every key is args_key's, so that the two kinds never mix
    (tests/test_bloat_fastpath.py holds them equal)."""
    try:
        dumps, option = orjson.dumps, _ORJSON_KEY
        if names is None:
            keys = [dumps(args, option=option) for args in arguments]
        else:
            keys = [dumps((name, args), option=option) for name, args in zip(names, arguments)]
        _refuse_non_finite(keys, arguments)
        return keys
    except TypeError:
        return _simple_keys(arguments, names)


def args_groups(indices: Sequence[int], arguments: Sequence[Mapping[str, Any]],
                names: Sequence[str] | None = None) -> dict[Any, list[int]]:
    """The indices (one for each call) grouped as args_keys(arguments, names) groups them, groups in
    order of their first index. The keys are made and dropped one at a time: a repeated call's
    canonical text is freed at once, not kept in a list of 60k texts (whose fresh pages cost more
    than the grouping)."""
    groups: dict[Any, list[int]] = defaultdict(list)
    dumps, option = orjson.dumps, _ORJSON_KEY
    try:
        if names is None:
            for i, args in zip(indices, arguments):
                groups[dumps(args, option=option)].append(i)
        else:
            for i, name, args in zip(indices, names, arguments):
                groups[dumps((name, args), option=option)].append(i)
        _refuse_non_finite(groups, arguments)
    except TypeError:
        groups = defaultdict(list)
        for i, key in zip(indices, _simple_keys(arguments, names)):
            groups[key].append(i)
    return groups


def _refuse_non_finite(keys: Iterable[bytes], arguments: Iterable[Any]) -> None:
    """TypeError if an arguments holds a NaN or an infinity, which orjson writes as null (as it does
    None). Such arguments have a key with a null in it: the arguments are looked through only when
    a distinct key has one (searching every key as it was made cost a quarter of the grouping)."""
    if any(b"null" in key for key in keys) and any(map(_has_non_finite, arguments)):
        raise TypeError("NaN or an infinity: orjson writes them as null")


def _simple_keys(arguments, names) -> list:
    if names is None:
        return [args_key(args) for args in arguments]
    return [(name, args_key(args)) for name, args in zip(names, arguments)]

