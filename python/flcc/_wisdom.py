"""Wisdom: the planner's decisions, kept and reused FFTW-style (see flcc.h)."""

import os

from . import _flcc
from ._errors import check


def export_wisdom():
    """The process's wisdom as text."""
    code, text = _flcc.wisdom_export()
    check(code)
    return text


def import_wisdom(text):
    """Merges wisdom text (flcc.Error INVALID_WISDOM when it is corrupt or from another build)."""
    if not isinstance(text, str):
        raise TypeError("wisdom text must be a str")
    check(_flcc.wisdom_import(text))


def export_wisdom_file(path):
    """Writes the process's wisdom to a file."""
    check(_flcc.wisdom_export_file(os.fspath(path)))


def import_wisdom_file(path):
    """Merges wisdom from a file."""
    check(_flcc.wisdom_import_file(os.fspath(path)))


def forget_wisdom():
    """Forgets the process's wisdom."""
    _flcc.wisdom_forget()


def wisdom_path():
    """The package's wisdom file: $XDG_CACHE_HOME/flcc/wisdom.txt (~/.cache/flcc/wisdom.txt)."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "flcc", "wisdom.txt")


def save_wisdom(path=None):
    """Writes the process's wisdom to the package's wisdom file (or `path`), which the package
    loads when it is imported: decisions measured once (rigor='measure') then serve every later
    process's ESTIMATE plans, the drop-in functions' default."""
    path = os.fspath(path) if path is not None else wisdom_path()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    export_wisdom_file(path)
    return path


def load_wisdom(path=None):
    """Merges the package's wisdom file (or `path`) when it exists; returns whether it did."""
    path = os.fspath(path) if path is not None else wisdom_path()
    if not os.path.isfile(path):
        return False
    import_wisdom_file(path)
    return True


def _load_at_import():
    # Wisdom from another build or machine is refused by the library (INVALID_WISDOM); the
    # package then plans as if there were none, and says so.
    try:
        load_wisdom()
    except Exception as e:  # noqa: BLE001 - importing the package must not fail on a cache file
        import warnings
        warnings.warn(f"flcc: the wisdom file {wisdom_path()} was not loaded: {e}", stacklevel=3)
