"""Typed errors. Library code raises these; only the CLI turns them into messages and exit codes.

Every error says what was wrong (which file, line or value) and what to do about it.
"""

from __future__ import annotations

import errno
import re


class GlassragError(Exception):
    """Base class: `str(err)` is the problem, `err.hint` what the user can do."""

    exit_code = 1

    def __init__(self, problem: str, hint: str = "") -> None:
        super().__init__(problem)
        self.problem = problem
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.problem}\n  → {self.hint}" if self.hint else self.problem


class IngestError(GlassragError):
    """A file could not be read or turned into sections."""

    def __init__(self, path: str, reason: str, hint: str = "") -> None:
        super().__init__(f"{path}: {reason}", hint)
        self.path = path
        self.reason = reason


class ConfigError(GlassragError):
    """A setting or a configuration file is wrong."""

    exit_code = 2


class UnknownNameError(ConfigError):
    """A stage variant was asked for by a name that is not in its table."""

    def __init__(self, family: str, name: str, valid: list[str]) -> None:
        super().__init__(
            f"unknown {family} {name!r}",
            f"choose one of: {', '.join(sorted(valid))}",
        )


class StoreError(GlassragError):
    """An index folder is missing, unreadable, or of another format version."""

    exit_code = 3


class LockFileError(StoreError):
    """A lock file (`.writer.lock`, `lab/.runs.lock`) that is a symbolic link or not a regular
    file: it is not opened, so no file a planted link points to is created, truncated or written."""

    def __init__(self, path: object, what: str) -> None:
        super().__init__(f"{visible(str(path))} is {what}, not a lock file glassrag made",
                         "remove it (glassrag makes a new one) and run the command again; "
                         "nothing was written, and whatever it points to was not opened")
        self.path = path


class DiskError(GlassragError):
    """A write failed because the disk is full, over quota or read-only: whatever was being
    written was removed, and what was there before is intact."""

    exit_code = 7
    ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG})

    def __init__(self, path: str, err: OSError, what: str = "nothing was changed") -> None:
        reason = {errno.EROFS: "the file system is read-only"}.get(err.errno or 0, "the disk is full")
        super().__init__(f"cannot write {visible(str(path))}: {reason} ({err.strerror or err})",
                         f"free some space or choose a writable folder, then run the command again; {what}")
        self.path = path

    @classmethod
    def of(cls, path: str, err: OSError, what: str = "nothing was changed") -> "DiskError | None":
        """The DiskError for `err` when it is one of a full or read-only disk, else None."""
        return cls(path, err, what) if err.errno in cls.ERRNOS else None


class QueryError(GlassragError):
    """A question cannot be searched (empty, or nothing left after analysis)."""

    exit_code = 2


class ShardError(GlassragError):
    """A sharded index's shard cannot serve (Ray missing or unreachable, a shard's actor lost, a
    shard written by another sharding than its catalogue's): `shard` is its number, None when the
    cluster itself is the problem. No ranking is returned without every shard's list."""

    exit_code = 8

    def __init__(self, problem: str, hint: str = "", shard: int | None = None) -> None:
        super().__init__(problem, hint)
        self.shard = shard


_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def visible(text: str) -> str:
    """Text safe to print on one line: control characters (a terminal would obey an escape
    sequence) and lone surrogates (not printable at all) become \\x1b, \\ud800 escapes."""
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii")
                            if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text)


_UNPRINTABLE_KEEP_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def visible_lines(text: str) -> str:
    """`visible` for text of several lines (a passage, a generated answer): line breaks and tabs
    stay, every other control character (ESC above all) is shown as its escape."""
    return _UNPRINTABLE_KEEP_LINES.sub(lambda m: visible(m.group()), text)


SECRET_KEYS = ("password", "sslpassword", "api_key", "api-key", "apikey", "key", "token",
               "access_token", "secret")


def redact(url: str) -> str:
    """The text without the password of any URL or libpq keyword in it (`user:PASSWORD@`,
    `password=PASSWORD`) nor a key in a query (`?api_key=KEY`, `&token=KEY`), for everything
    glassrag shows or saves: messages, run files, pages. A password with an unencoded `@`
    (`user:p@ss@host`) is hidden up to the last `@` of the URL's authority, as libpq reads it."""
    url = re.sub(r"(://[^:/?#@\s]*):[^/?#\s]*@", r"\1:***@", url)
    keys = "|".join(re.escape(k) for k in SECRET_KEYS)
    return re.sub(rf"(?i)((?<![\w-])(?:{keys})=)[^&\s]*", r"\1***", url)


class GoldenError(GlassragError):
    """A golden set failed validation: `problems` lists every (file, line, reason)."""

    exit_code = 4

    def __init__(self, path: str, problems: list[tuple[int, str]]) -> None:
        lines = "\n".join(f"  {visible(path)}:{line}: {visible(reason)}" for line, reason in problems)
        super().__init__(
            f"{visible(path)}: {len(problems)} problem(s)\n{lines}",
            "fix the lines above; nothing was evaluated"
            + ("; `glassrag documents --index DIR` lists the index's document ids and locators"
               if any("is not in the index" in r or "has no locator" in r for _, r in problems) else ""),
        )
        self.path = path
        self.problems = problems


class RunFileError(GlassragError):
    """A run file that is not a glassrag run of this format, or whose shape is wrong."""

    exit_code = 4


class GenerationError(GlassragError):
    """The generator's backend is missing, unreachable or answered something unusable."""

    exit_code = 6


class PromptRefused(GenerationError):
    """The backend works but refused this one prompt (e.g. longer than its context window):
    the question gets no generated answer, and the others are still answered."""
