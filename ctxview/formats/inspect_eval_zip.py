"""Inspect AI's `.eval` logs: a zip archive of JSON members, read with zipfile, bounded.

Layout (inspect_ai/log/_recorders/eval.py): `header.json` (the EvalLog without its samples,
written when the eval finishes), `_journal/start.json` (version, eval, plan: all a running or
interrupted eval has), `samples/<id>_epoch_<epoch>.json` (one EvalSample each; a re-logged
sample appends a second member of the same name, and the last one counts, as in Inspect),
`reductions.json`, `summaries.json`. Since 2026 the members are compressed with Zstandard
(method 93), which Python's zipfile reads only with the `zstandard` package installed.

Nothing is extracted to disk and members are found by name only, so member names cannot reach
outside the archive; each member is read to at most its declared size (and MAX_MEMBER_BYTES),
and the archive to MAX_MEMBERS members. Every failure is one LoadError line.
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
from typing import Any, BinaryIO

from ctxview.model import Session
from ctxview.formats import limits
from ctxview.formats.errors import LoadError
from ctxview.formats.inputs import Input
from ctxview.formats.inspect_ai import EXPECTED, LogBuilder
from ctxview.formats.parsing.json_decode import decode_json
from ctxview.plain_number import plain_number

__all__ = ["MAX_MEMBERS", "MAX_MEMBER_BYTES", "ZIP_MAGIC", "is_zip", "load_eval"]

ZIP_MAGIC = b"PK\x03\x04"
MAX_MEMBERS = 200_000             # members of one archive (a sample per member)
MAX_MEMBER_BYTES = 1 << 30        # one member, uncompressed
_ZSTD = 93                        # the zip compression method number of Zstandard
_LOCAL_HEADER = struct.Struct("<4s5HL2L2H")
_SAMPLE = re.compile(r"samples/(.+)_epoch_([0-9]{1,18})\.json")


def is_zip(inp: Input) -> bool:
    return inp.head(4) == ZIP_MAGIC


def _bad(inp: Input, what: str) -> LoadError:
    return LoadError(inp.name, what, expected=EXPECTED)


def _zstd_member(inp: Input, f: BinaryIO, info: zipfile.ZipInfo) -> bytes:
    """A Zstandard-compressed member, decompressed with the zstandard package (optional)."""
    try:
        import zstandard
    except ImportError:
        raise _bad(inp, f"member {info.filename} is compressed with Zstandard (Inspect AI's default since 2026): "
                        "install the zstandard package (pip install 'ctxview[inspect]') to read it") from None
    f.seek(info.header_offset)
    head = f.read(_LOCAL_HEADER.size)
    if len(head) != _LOCAL_HEADER.size or head[:4] != ZIP_MAGIC:
        raise _bad(inp, f"member {info.filename}: bad local header")
    name_len, extra_len = _LOCAL_HEADER.unpack(head)[-2:]
    f.seek(info.header_offset + _LOCAL_HEADER.size + name_len + extra_len)
    raw = f.read(info.compress_size)
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw), read_across_frames=True)
        parts, left = [], info.file_size + 1
        while left > 0 and (piece := reader.read(left)):
            parts.append(piece)
            left -= len(piece)
        data = b"".join(parts)
    except zstandard.ZstdError as exc:
        raise _bad(inp, f"member {info.filename}: Zstandard data is corrupt ({exc})") from None
    return data


def _member(inp: Input, zf: zipfile.ZipFile, f: BinaryIO, info: zipfile.ZipInfo) -> Any:
    """A member's JSON, read no further than its declared size."""
    if info.file_size > MAX_MEMBER_BYTES:
        raise _bad(inp, f"member {info.filename} is {info.file_size:,} bytes uncompressed; ctxview reads at most "
                        f"{MAX_MEMBER_BYTES:,}")
    if info.flag_bits & 0x1:
        raise _bad(inp, f"member {info.filename} is encrypted")
    try:
        if info.compress_type == _ZSTD:
            data = _zstd_member(inp, f, info)
        else:
            with zf.open(info) as member:
                data = member.read(info.file_size + 1)
    except LoadError:
        raise
    except (zipfile.BadZipFile, NotImplementedError, EOFError, OSError, ValueError, RuntimeError) as exc:
        raise _bad(inp, f"member {info.filename} cannot be read: {exc}") from None
    if len(data) != info.file_size:
        raise _bad(inp, f"member {info.filename} holds {'more' if len(data) > info.file_size else 'less'} than "
                        f"its declared {info.file_size:,} bytes")
    return decode_json(data, f"{inp.name}[{info.filename}]", None, EXPECTED)


def _sample_key(name: str) -> tuple[int, Any, str]:
    """Samples in the order Inspect sorts them: by epoch, then id (numbers before strings)."""
    m = _SAMPLE.fullmatch(name)
    if m is None:
        return (0, 0, name)
    sid = m.group(1)
    number = plain_number(sid)
    return (int(m.group(2)), (0, number, "") if number is not None else (1, 0, sid), name)


def load_eval(inp: Input) -> Session:
    """The session of an Inspect AI `.eval` archive."""
    f = inp.open()
    try:
        try:
            zf = zipfile.ZipFile(f)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
            raise _bad(inp, f"not a readable zip archive ({exc})") from None
        with zf:
            infos = zf.infolist()
            if len(infos) > MAX_MEMBERS:
                raise _bad(inp, f"the archive holds {len(infos):,} members; ctxview reads at most {MAX_MEMBERS:,}")
            members = {i.filename: i for i in infos}  # a repeated name: the last entry counts
            head = members.get("header.json") or members.get("_journal/start.json")
            if head is None:
                raise _bad(inp, "a zip archive without header.json or _journal/start.json: not an Inspect AI .eval log")
            header = _member(inp, zf, f, head)
            if type(header) is not dict or type(header.get("eval")) is not dict:
                raise _bad(inp, f"{head.filename}: expected an object with \"eval\"")
            b = LogBuilder(inp.name)
            b.spec(header)
            names = sorted((n for n in members if n.startswith("samples/") and n.endswith(".json")), key=_sample_key)
            if len(names) > limits.MAX_CONVERSATIONS:  # refused before any is read, as the registry would after
                raise _bad(inp, f"{len(names):,} samples (a conversation each); ctxview reads at most "
                                f"{limits.MAX_CONVERSATIONS:,}")
            for name in names:
                b.sample(_member(inp, zf, f, members[name]), name)
            if head.filename != "header.json":
                b.warnings.insert(0, "no header.json: the eval is still running or was interrupted "
                                     "(read from _journal/start.json)")
            return b.session(header, "eval")
    finally:
        f.close()
