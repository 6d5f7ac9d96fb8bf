"""meshsim's errors as Python exceptions (raised by the C++ half, see src/errors.h)."""


class _Located:
    """Where a problem is: ``file``, ``line`` and ``column`` (1-based; 0 when unknown),
    ``key`` (the dotted key, e.g. ``plan.tp``; "" when none) and ``message`` (what was
    expected and what was found). ``str(error)`` is the CLI's one-line message,
    ``file:line:column: key: message`` without the unknown parts."""

    def _locate(self, file="", line=0, column=0, key="", message=""):
        self.file = file
        self.line = line
        self.column = column
        self.key = key
        self.message = message

    def __reduce__(self):
        return (_rebuild, (type(self), str(self), self.file, self.line, self.column,
                           self.key, self.message))


def _rebuild(cls, text, file, line, column, key, message):
    return cls(text, file=file, line=line, column=column, key=key, message=message)


class InputError(_Located, ValueError):
    """Bad input: a file, dict, override or argument that meshsim rejects (the CLI's
    exit code 2). Attributes: file, line, column, key, message."""

    def __init__(self, text, file="", line=0, column=0, key="", message=""):
        ValueError.__init__(self, text)
        self._locate(file, line, column, key, message or text)


class IoError(_Located, OSError):
    """The input is fine but the host failed a file operation (a trace that cannot be
    written; the CLI's exit code 4). Attributes: file, line, column, key, message."""

    def __init__(self, text, file="", line=0, column=0, key="", message=""):
        OSError.__init__(self, text)
        self._locate(file, line, column, key, message or text)
        self.filename = file or None


class InternalError(_Located, RuntimeError):
    """meshsim broke its own promise (a replay that stalled; the CLI's exit code 1)."""

    def __init__(self, text, file="", line=0, column=0, key="", message=""):
        RuntimeError.__init__(self, text)
        self._locate(file, line, column, key, message or text)


def _format(file, line, column, key, message):
    """The CLI's message for these parts (InputError::ToString in sim/core/status.cc)."""
    out = ""
    if file:
        out += file
        if line > 0:
            out += f":{line}"
            if column > 0:
                out += f":{column}"
        out += ": "
    if key:
        out += f"{key}: "
    return out + message


def _relocated(error, file, drop_position):
    """``error`` with its file replaced by ``file`` and, if ``drop_position``, no line
    or column (they would point into text meshsim generated, not into anything the user
    wrote)."""
    line, column = (0, 0) if drop_position else (error.line, error.column)
    text = _format(file, line, column, error.key, error.message)
    return type(error)(text, file=file, line=line, column=column, key=error.key,
                       message=error.message)
