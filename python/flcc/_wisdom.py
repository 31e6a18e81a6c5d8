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
