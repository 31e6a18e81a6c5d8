"""flcc.Error and the library's result codes."""

from . import _flcc

#: The C library's result codes (flcc_result), by name.
CODES = {
    "SUCCESS": 0, "INVALID_PLAN": 1, "INVALID_DIMENSION": 2, "INVALID_SIZE": 3,
    "INVALID_TYPE": 4, "INVALID_PLATFORM": 5, "INVALID_VALUE": 6, "ALLOC_FAILED": 7,
    "EXEC_FAILED": 8, "NULL_POINTER": 9, "NONFINITE_INPUT": 10, "UNKNOWN_METHOD": 11,
    "METHOD_NOT_APPLICABLE": 12, "OPERATION_MISMATCH": 13, "NO_DEVICE": 14, "DEVICE_ERROR": 15,
    "WISDOM_MISS": 16, "INVALID_WISDOM": 17, "IO_ERROR": 18, "INTERNAL_ERROR": 19,
}
_NAMES = {v: k for k, v in CODES.items()}


class Error(RuntimeError):
    """A failure reported by the FLCC library.

    ``code`` is the C library's flcc_result value, ``name`` its name without the FLCC_
    prefix (e.g. ``"NONFINITE_INPUT"``) and ``detail`` the library's account of the failure
    (flcc_last_error_detail: the argument and the rule it broke), possibly empty. Bad Python arguments raise ValueError or TypeError
    instead, before the library is called.
    """

    def __init__(self, code, context="", detail=""):
        self.code = int(code)
        self.name = _NAMES.get(self.code, "UNKNOWN")
        self.context = context
        self.detail = detail
        message = f"FLCC_{self.name}: {_flcc.result_string(self.code)}"
        if detail:
            message += f": {detail}"
        if context:
            message += f" ({context})"
        super().__init__(message)

    def __reduce__(self):
        # Errors raised in Dask workers travel back to the client pickled.
        return (Error, (self.code, self.context, self.detail))


def check(code, context=""):
    """Raises Error for a nonzero result code, with the library's detail of the failure (which
    argument, which rule), read on the thread that made the failing call."""
    if code:
        raise Error(code, context, _flcc.last_error_detail())
