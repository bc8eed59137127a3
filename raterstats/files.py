"""Writing the files a user names: all at once or not at all, and checked before the work.

:func:`write_atomic` writes a file under a temporary name in its own folder and renames it
into place (``os.replace``) only when the writer has finished, so that an interrupted or
failed write (Ctrl-C, a full disk, an exception) leaves the previous file as it was and no
half-written one behind. :func:`check_output` says, before a long computation, whether a
path can be written at all, so that a typo in ``--out`` fails at once rather than after
the fit.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path

#: the temporary name of a file being written: ``.NAME.tmp-TOKEN.SUFFIX`` in its folder
TEMP_MARK = ".tmp-"


class OutputPathError(ValueError):
    """An output path that cannot be written (a folder where a file is meant, a file where
    a folder is meant, a folder that cannot be created or written to)."""


def temp_path(path: Path) -> Path:
    """A fresh temporary name beside ``path``, with the same suffix (writers such as
    Matplotlib choose the format by the suffix).

    Examples
    --------
    >>> p = temp_path(Path("out/fit.nc"))
    >>> p.parent, p.name.startswith(".fit.tmp-"), p.suffix
    (PosixPath('out'), True, '.nc')
    """
    return path.with_name(f".{path.stem}{TEMP_MARK}{secrets.token_hex(6)}{path.suffix}")


def write_atomic(path: str | os.PathLike[str], write: Callable[[Path], object]) -> Path:
    """Write the file ``path`` all at once: ``write(tmp)`` writes a temporary file in the
    same folder, which replaces ``path`` only when ``write`` returns.

    On any exception, ``KeyboardInterrupt`` included, the temporary file is removed and the
    exception goes on; a file already at ``path`` is left untouched. Missing parent
    folders are created.

    Parameters
    ----------
    path : path
        The file to write.
    write : callable
        Writes the content to the path it is given (e.g. ``frame.write_csv``,
        ``dt.to_netcdf``, ``lambda p: p.write_text(text)``); its return value is ignored.

    Returns
    -------
    Path
        ``path``.

    Examples
    --------
    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "notes.txt"
    >>> _ = write_atomic(target, lambda p: p.write_text("first"))
    >>> def interrupted(p):
    ...     p.write_text("half a")
    ...     raise KeyboardInterrupt
    >>> try:
    ...     write_atomic(target, interrupted)
    ... except KeyboardInterrupt:
    ...     pass
    >>> target.read_text(), sorted(q.name for q in target.parent.iterdir())
    ('first', ['notes.txt'])
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(target)
    try:
        write(tmp)
        if not tmp.is_file():
            raise OSError(f"nothing was written to {target}")
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def _nearest_existing(path: Path) -> Path:
    """``path`` or its nearest ancestor that exists."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path.cwd()  # pragma: no cover - a relative path's parents end at "."


def check_output(path: str | os.PathLike[str], *, folder: bool = False) -> Path:
    """Check that ``path`` can be written, before the work that produces it.

    A file: ``path`` is not a folder; when it exists it is writable; otherwise its nearest
    existing ancestor is a folder that can be written to (missing folders between are
    created when the file is written). A folder (``folder=True``): ``path`` is a writable
    folder, or can be created.

    Parameters
    ----------
    path : path
        The output.
    folder : bool
        Whether ``path`` is a folder to write files into.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    OutputPathError
        Saying what is wrong with the path.

    Examples
    --------
    >>> import tempfile
    >>> tmp = Path(tempfile.mkdtemp())
    >>> check_output(tmp / "new" / "fit.nc") == tmp / "new" / "fit.nc"
    True
    >>> check_output(tmp)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    raterstats.files.OutputPathError: ... is a folder, not a file: name the file to write
    """
    target = Path(path)
    what = "folder" if folder else "file"
    if str(path) == "":
        raise OutputPathError(f"an empty path is not a {what} to write")
    if target.exists():
        if folder and not target.is_dir():
            raise OutputPathError(f"{target} exists and is not a folder: name a folder to write")
        if not folder and target.is_dir():
            raise OutputPathError(f"{target} is a folder, not a file: name the file to write")
        if not os.access(target, os.W_OK):
            raise OutputPathError(f"{target} is not writable")
        if folder and not os.access(target, os.X_OK):
            raise OutputPathError(f"{target} cannot be entered (no search permission)")
        if not folder and not os.access(target.parent, os.W_OK | os.X_OK):
            raise OutputPathError(f"cannot write {target}: its folder is not writable")
        return target
    base = _nearest_existing(target.parent)
    if not base.is_dir():
        raise OutputPathError(f"cannot write {target}: {base} is a file, not a folder")
    if not os.access(base, os.W_OK | os.X_OK):
        raise OutputPathError(f"cannot write {target}: the folder {base} is not writable")
    return target


__all__ = ["TEMP_MARK", "OutputPathError", "check_output", "temp_path", "write_atomic"]
